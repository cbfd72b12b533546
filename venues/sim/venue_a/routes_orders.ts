/**
 * Regular and algo order endpoints (TRADE / USER_DATA, signed).
 */
import { isZero } from "../../decimal.ts";
import { cancelAlgoOrder, cancelOpenAlgoOrders, findAlgoOrder, fireIfReached, placeAlgoOrder } from "./algo.ts";
import { amendOrder, cancelOpenOrders, cancelOrder, findOrder, placeOrder } from "./engine.ts";
import { errors } from "./errors.ts";
import type { RouteSpec } from "./route.ts";
import { algoJson, orderJson } from "./serializers.ts";
import { openAlgoOrders, openOrders, queryable } from "./state.ts";

const CANCEL_ALL_DONE = { code: 200, msg: "The operation of cancel all open order is done." };
const bySymbol = (symbolWeight: number, allWeight: number) => (params: { get(name: string): string | undefined }) =>
  params.get("symbol") ? symbolWeight : allWeight;

export function orderRoutes(): RouteSpec[] {
  return [
    {
      method: "POST",
      path: "/fapi/v1/order",
      weight: 0,
      security: "SIGNED",
      orderMutation: true,
      countsOrder: true,
      handle: ({ state, account, params }) => orderJson(state, placeOrder(state, account, params), "placement"),
    },
    {
      method: "GET",
      path: "/fapi/v1/order",
      weight: 1,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const order = findOrder(account, params);
        const ended = order.status === "CANCELED" || order.status === "EXPIRED";
        const filled = !isZero(order.executedQty);
        if (!queryable({ created: order.time, ended, filled }, state.now())) throw errors.noSuchOrder();
        return orderJson(state, order, "query");
      },
    },
    {
      method: "DELETE",
      path: "/fapi/v1/order",
      weight: 1,
      security: "SIGNED",
      orderMutation: true,
      handle: ({ state, account, params }) => orderJson(state, cancelOrder(state, account, params), "placement"),
    },
    {
      method: "PUT",
      path: "/fapi/v1/order",
      weight: 1,
      security: "SIGNED",
      orderMutation: true,
      countsOrder: true,
      handle: ({ state, account, params }) => orderJson(state, amendOrder(state, account, params), "placement"),
    },
    {
      method: "GET",
      path: "/fapi/v1/openOrders",
      weight: bySymbol(1, 40),
      security: "SIGNED",
      handle: ({ state, account, params }) =>
        openOrders(account, params.get("symbol")).map((o) => orderJson(state, o, "query")),
    },
    {
      method: "GET",
      path: "/fapi/v1/allOrders",
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = params.required("symbol");
        const limit = params.int("limit") ?? 500;
        return account.orders.filter((o) => o.symbol === symbol).slice(-limit).map((o) => orderJson(state, o, "query"));
      },
    },
    {
      method: "DELETE",
      path: "/fapi/v1/allOpenOrders",
      weight: 1,
      security: "SIGNED",
      orderMutation: true,
      handle: ({ state, account, params }) => {
        const symbol = params.required("symbol");
        if (!state.markets.has(symbol)) throw errors.badSymbol();
        cancelOpenOrders(state, account, symbol);
        return CANCEL_ALL_DONE;
      },
    },
    {
      method: "POST",
      path: "/fapi/v1/algoOrder",
      weight: 0,
      security: "SIGNED",
      orderMutation: true,
      countsOrder: true,
      handle: ({ state, account, params }) => {
        const algo = placeAlgoOrder(state, account, params);
        // The answer is the order as placed (NEW); one whose trigger is already reached fires after it.
        const placed = algoJson(algo, "placement");
        fireIfReached(state, account, algo);
        return placed;
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/algoOrder",
      weight: 1,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const algo = findAlgoOrder(account, params);
        const ended = algo.algoStatus === "CANCELED" || algo.algoStatus === "EXPIRED";
        const filled = !isZero(algo.actualQty);
        if (!queryable({ created: algo.createTime, ended, filled }, state.now())) throw errors.noSuchOrder();
        return algoJson(algo, "query");
      },
    },
    {
      method: "DELETE",
      path: "/fapi/v1/algoOrder",
      weight: 1,
      security: "SIGNED",
      orderMutation: true,
      handle: ({ state, account, params }) => {
        const algo = cancelAlgoOrder(state, account, params);
        // The venue really answers this code as a string here, unlike its other success bodies.
        return { algoId: algo.algoId, clientAlgoId: algo.clientAlgoId, code: "200", msg: "success" };
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/openAlgoOrders",
      weight: bySymbol(1, 40),
      security: "SIGNED",
      handle: ({ account, params }) => {
        const algoId = params.int("algoId");
        return openAlgoOrders(account, params.get("symbol"))
          .filter((o) => algoId === undefined || o.algoId === algoId)
          .map((o) => algoJson(o, "query"));
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/allAlgoOrders",
      weight: 5,
      security: "SIGNED",
      handle: ({ account, params }) => {
        const symbol = params.required("symbol");
        return account.algoOrders.filter((o) => o.symbol === symbol).map((o) => algoJson(o, "query"));
      },
    },
    {
      method: "DELETE",
      path: "/fapi/v1/algoOpenOrders",
      weight: 1,
      security: "SIGNED",
      orderMutation: true,
      handle: ({ state, account, params }) => {
        const symbol = params.required("symbol");
        if (!state.markets.has(symbol)) throw errors.badSymbol();
        cancelOpenAlgoOrders(state, account, symbol);
        return CANCEL_ALL_DONE;
      },
    },
  ];
}
