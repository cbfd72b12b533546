/**
 * `GET /v1/users/:id/account` and `/positions`: read live from the provider
 * with the client's stored credentials, never cached (spec, Balance view).
 */
import type { Ctx } from "../context.ts";
import { div, isZero, mul } from "../../venues/decimal.ts";
import type { Balance, Order, Position, ProviderId } from "../../venues/types.ts";
import { callWithAccount } from "./account_call.ts";
import { clientAccount, requireAccount } from "./client_provider.ts";

export async function getBalanceView(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const { account } = await clientAccount(ctx, input.externalUserId, input.providerId);
  const snapshot = await callWithAccount(
    ctx,
    requireAccount(account),
    (venue, credentials) => venue.getAccount(credentials),
  );
  return {
    providerId: input.providerId,
    balances: snapshot.balances.map(balanceWire),
    positions: snapshot.positions.map((position) => positionWire(position, input.providerId)),
    orders: snapshot.openOrders.map((order) => orderWire(order, input.providerId)),
  };
}

export async function getPositions(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const view = await getBalanceView(ctx, input);
  return { providerId: input.providerId, positions: view.positions };
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
