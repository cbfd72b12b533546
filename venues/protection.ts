/** A protection is a reduce-only conditional market order; venues place it with their own endpoints. */
import type { PlaceOrderRequest, ProtectionRequest } from "./types.ts";

export function protectionOrder(request: ProtectionRequest): PlaceOrderRequest & { triggerPrice: string } {
  return {
    symbol: request.symbol,
    side: request.side,
    type: request.kind === "STOP_LOSS" ? "STOP_MARKET" : "TAKE_PROFIT_MARKET",
    quantity: request.quantity,
    triggerPrice: request.triggerPrice,
    reduceOnly: true,
    clientOrderId: request.clientOrderId,
    ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
  };
}
