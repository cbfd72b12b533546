/**
 * `GET /v1/users/:id/account` and `/positions`: read live from the provider
 * with the client's stored credentials, never cached (spec, Balance view).
 *
 * The view's orders are the regular open orders and the conditional ones
 * waiting for their trigger (stops and targets, with `triggerPrice` and
 * `reduceOnly`): the venues keep these apart. VENUE_A lists them on its algo
 * endpoint (`GET /fapi/v1/openAlgoOrders` without a symbol, IP weight 40, on
 * top of the account read's 55 to 65); VENUE_B's trigger orders come from
 * `frontendOpenOrders` again (weight 20). Both go through the adapters'
 * request paths, so the egress budget pays for them like any other read.
 */
import type { Ctx } from "../context.ts";
import { div, isZero, mul } from "../../venues/decimal.ts";
import type { Balance, Order, Position, ProviderId } from "../../venues/types.ts";
import { callWithAccount } from "./account_call.ts";
import { clientAccount, requireAccount } from "./client_provider.ts";

export async function getBalanceView(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const { account } = await clientAccount(ctx, input.externalUserId, input.providerId);
  // One call, so a refused credential is judged once for both reads. A view
  // without the conditional orders would show a protected position as
  // unprotected, so either read failing fails the view.
  const [snapshot, conditional] = await callWithAccount(
    ctx,
    requireAccount(account),
    (venue, credentials) => Promise.all([venue.getAccount(credentials), venue.listProtections(credentials)]),
  );
  return {
    providerId: input.providerId,
    balances: snapshot.balances.map(balanceWire),
    positions: snapshot.positions.map((position) => positionWire(position, input.providerId)),
    orders: [...snapshot.openOrders, ...conditional].map((order) => orderWire(order, input.providerId)),
  };
}

/** Positions alone: the account read, without the conditional orders the balance view adds. */
export async function getPositions(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const { account } = await clientAccount(ctx, input.externalUserId, input.providerId);
  const snapshot = await callWithAccount(
    ctx,
    requireAccount(account),
    (venue, credentials) => venue.getAccount(credentials),
  );
  return {
    providerId: input.providerId,
    positions: snapshot.positions.map((position) => positionWire(position, input.providerId)),
  };
}

function balanceWire(balance: Balance) {
  return {
    asset: balance.asset,
    free: Number(balance.free),
    total: Number(balance.total),
    usdValue: balance.usdValue === null ? null : Number(balance.usdValue),
  };
}

/** unrealizedPnlPercent is on the position's initial margin (notional at entry / leverage), to 2 decimals. */
function positionWire(position: Position, providerId: ProviderId) {
  const margin = div(mul(position.entryPrice, position.quantity), position.leverage || 1, 12);
  return {
    symbol: position.symbol,
    side: position.side,
    quantity: Number(position.quantity),
    entryPrice: Number(position.entryPrice),
    markPrice: Number(position.markPrice),
    unrealizedPnlUsd: Number(position.unrealizedPnlUsd),
    unrealizedPnlPercent: isZero(margin) ? 0 : Number(div(mul(position.unrealizedPnlUsd, 100), margin, 2)),
    leverage: position.leverage,
    marginMode: position.marginMode,
    liquidationPrice: position.liquidationPrice === null ? null : Number(position.liquidationPrice),
    providerId,
  };
}

function orderWire(order: Order, providerId: ProviderId) {
  const number = (value: string | null) => value === null ? null : Number(value);
  return {
    orderId: order.orderId,
    clientOrderId: order.clientOrderId,
    symbol: order.symbol,
    side: order.side,
    type: order.type,
    status: order.status,
    quantity: Number(order.quantity),
    filledQuantity: Number(order.filledQuantity),
    price: number(order.price),
    averagePrice: number(order.averagePrice),
    triggerPrice: number(order.triggerPrice),
    reduceOnly: order.reduceOnly,
    timeInForce: order.timeInForce,
    createdAt: new Date(order.createdAt).toISOString(),
    providerId,
  };
}
