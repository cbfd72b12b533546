/**
 * Account reads, account/symbol configuration writes, and the spot-host key
 * restrictions (all signed).
 */
import { isZero } from "../../decimal.ts";
import { errors } from "./errors.ts";
import { MAKER_RATE, TAKER_RATE } from "./ledger.ts";
import type { RequestParams } from "./params.ts";
import type { RouteSpec } from "./route.ts";
import { accountJson, balanceJson, maxNotionalValue, positionRiskJson } from "./serializers.ts";
import {
  emitAccountEvent,
  openAlgoOrders,
  openOrders,
  type SimAccount,
  type SimState,
  symbolConfigOf,
} from "./state.ts";

const SUCCESS = { code: 200, msg: "success" };

function requiredBool(params: RequestParams, name: string): boolean {
  const value = params.bool(name);
  if (value === undefined) throw errors.mandatory(name);
  return value;
}

function knownSymbol(state: SimState, params: RequestParams): string {
  const symbol = params.required("symbol");
  if (!state.markets.has(symbol)) throw errors.badSymbol();
  return symbol;
}

function hasPosition(account: SimAccount, symbol?: string): boolean {
  return [...account.positions].some(([s, p]) => (!symbol || s === symbol) && !isZero(p.amt));
}

function symbolConfigJson(state: SimState, account: SimAccount, symbol: string) {
  const config = symbolConfigOf(account, symbol);
  return {
    symbol,
    marginType: config.marginType,
    isAutoAddMargin: false,
    leverage: config.leverage,
    maxNotionalValue: maxNotionalValue(state.markets.get(symbol)!.def, config.leverage),
  };
}

const v = (version: 2 | 3) => `/fapi/v${version}`;

export function accountRoutes(): RouteSpec[] {
  const reads: RouteSpec[] = ([2, 3] as const).flatMap((version): RouteSpec[] => [
    {
      method: "GET",
      path: `${v(version)}/account`,
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account }) => accountJson(state, account, version),
    },
    {
      method: "GET",
      path: `${v(version)}/balance`,
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account }) => balanceJson(state, account),
    },
    {
      method: "GET",
      path: `${v(version)}/positionRisk`,
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account, params }) => positionRiskJson(state, account, version, params.get("symbol")),
    },
  ]);
  return [
    ...reads,
    {
      method: "GET",
      path: "/fapi/v1/accountConfig",
      weight: 5,
      security: "SIGNED",
      handle: ({ account }) => ({
        feeTier: 0,
        canTrade: true,
        canDeposit: true,
        canWithdraw: true,
        dualSidePosition: account.dualSidePosition,
        updateTime: 0,
        multiAssetsMargin: account.multiAssetsMargin,
        tradeGroupId: -1,
      }),
    },
    {
      method: "GET",
      path: "/fapi/v1/symbolConfig",
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = params.get("symbol");
        if (symbol !== undefined && !state.markets.has(symbol)) throw errors.badSymbol();
        return (symbol ? [symbol] : [...state.markets.keys()]).map((s) => symbolConfigJson(state, account, s));
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/positionSide/dual",
      weight: 30,
      security: "SIGNED",
      handle: ({ account }) => ({ dualSidePosition: account.dualSidePosition }),
    },
    {
      method: "POST",
      path: "/fapi/v1/positionSide/dual",
      weight: 1,
      security: "SIGNED",
      handle: ({ account, params }) => {
        const dual = requiredBool(params, "dualSidePosition");
        if (dual === account.dualSidePosition) throw errors.positionSideUnchanged();
        if (openOrders(account).length > 0 || openAlgoOrders(account).length > 0) throw errors.positionSideOpenOrders();
        if (hasPosition(account)) throw errors.positionSideQuantity();
        account.dualSidePosition = dual;
        return SUCCESS;
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/multiAssetsMargin",
      weight: 30,
      security: "SIGNED",
      handle: ({ account }) => ({ multiAssetsMargin: account.multiAssetsMargin }),
    },
    {
      method: "POST",
      path: "/fapi/v1/multiAssetsMargin",
      weight: 1,
      security: "SIGNED",
      handle: ({ account, params }) => {
        const multi = requiredBool(params, "multiAssetsMargin");
        if (multi === account.multiAssetsMargin) throw errors.multiAssetsUnchanged();
        if (multi && [...account.symbolConfig.values()].some((c) => c.marginType === "ISOLATED")) {
          throw errors.isolatedWithMultiAssets();
        }
        account.multiAssetsMargin = multi;
        return SUCCESS;
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/feeBurn",
      weight: 30,
      security: "SIGNED",
      handle: ({ account }) => ({ feeBurn: account.feeBurn }),
    },
    {
      method: "POST",
      path: "/fapi/v1/feeBurn",
      weight: 1,
      security: "SIGNED",
      handle: ({ account, params }) => {
        account.feeBurn = requiredBool(params, "feeBurn");
        return SUCCESS;
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/commissionRate",
      weight: 20,
      security: "SIGNED",
      handle: ({ state, params }) => ({
        symbol: knownSymbol(state, params),
        makerCommissionRate: MAKER_RATE,
        takerCommissionRate: TAKER_RATE,
        rpiCommissionRate: "0",
      }),
    },
    {
      method: "GET",
      path: "/fapi/v1/leverageBracket",
      weight: 1,
      security: "SIGNED",
      handle: ({ state, params }) => {
        const view = (symbol: string) => ({
          symbol,
          notionalCoef: 1.0,
          brackets: state.markets.get(symbol)!.def.brackets,
        });
        // With a symbol the venue answers one object, without it an array.
        return params.get("symbol") ? view(knownSymbol(state, params)) : [...state.markets.keys()].map(view);
      },
    },
    {
      method: "POST",
      path: "/fapi/v1/leverage",
      weight: 1,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = knownSymbol(state, params);
        const raw = params.required("leverage");
        const leverage = params.int("leverage")!;
        const max = state.markets.get(symbol)!.def.brackets[0].initialLeverage;
        if (leverage < 1 || leverage > max) throw errors.badLeverage(raw);
        const config = symbolConfigOf(account, symbol);
        if (config.marginType === "ISOLATED" && hasPosition(account, symbol) && leverage < config.leverage) {
          throw errors.isolatedLeverageReduction();
        }
        config.leverage = leverage;
        emitAccountEvent(state, account, { kind: "leverage", symbol, leverage });
        return { leverage, maxNotionalValue: maxNotionalValue(state.markets.get(symbol)!.def, leverage), symbol };
      },
    },
    {
      method: "POST",
      path: "/fapi/v1/marginType",
      weight: 1,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = knownSymbol(state, params);
        const marginType = params.oneOf(
          "marginType",
          ["ISOLATED", "CROSSED"] as const,
          () => errors.invalidParam("marginType"),
        );
        if (!marginType) throw errors.mandatory("marginType");
        const config = symbolConfigOf(account, symbol);
        if (config.marginType === marginType) throw errors.marginTypeUnchanged();
        if (marginType === "ISOLATED" && account.multiAssetsMargin) throw errors.multiAssetsWithIsolated();
        if (openOrders(account, symbol).length > 0) throw errors.marginTypeOpenOrders();
        if (hasPosition(account, symbol)) throw errors.marginTypePosition();
        config.marginType = marginType;
        emitAccountEvent(state, account, {
          kind: "balance",
          reason: "MARGIN_TYPE_CHANGE",
          changes: [],
          symbols: [symbol],
        });
        return SUCCESS;
      },
    },
    {
      method: "GET",
      path: "/sapi/v1/account/apiRestrictions",
      weight: 1,
      security: "SIGNED_SPOT",
      handle: ({ account }) => ({
        ipRestrict: account.ipRestrict,
        createTime: account.createTime,
        enableReading: true,
        enableWithdrawals: account.canWithdraw,
        enableInternalTransfer: false,
        enableMargin: false,
        enableFutures: account.enableFutures,
        permitsUniversalTransfer: false,
        enableVanillaOptions: false,
        enableFixApiTrade: false,
        enableFixReadOnly: false,
        enableSpotAndMarginTrading: false,
        enablePortfolioMarginTrading: false,
      }),
    },
    // ccxt's default loadMarkets asks the spot host for currencies; an empty answer lets it build them from markets.
    { method: "GET", path: "/sapi/v1/capital/config/getall", weight: 10, security: "SIGNED_SPOT", handle: () => [] },
    { method: "GET", path: "/sapi/v1/margin/allPairs", weight: 1, security: "SIGNED_SPOT", handle: () => [] },
  ];
}
