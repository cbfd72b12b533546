/**
 * The venue's error answers, with the exact codes, messages and HTTP statuses
 * the real venue uses, so adapter code meets the same strings in tests.
 */

/** A venue error answer: `{code, msg}` with an HTTP status. */
export class SimError extends Error {
  constructor(readonly code: number, message: string, readonly status = 400) {
    super(message);
    this.name = "SimError";
  }
}

const fail = (code: number, msg: string, status = 400) => new SimError(code, msg, status);

export const errors = {
  mandatory: (name: string) => fail(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`),
  eitherParam: (a: string, b: string) => fail(-1102, `Param '${a}' or '${b}' must be sent, but both were empty/null!`),
  illegalChars: (name: string) => fail(-1100, `Illegal characters found in parameter '${name}'.`),
  invalidParam: (name: string) => fail(-1130, `Data sent for parameter '${name}' is not valid.`),
  notRequired: (name: string) => fail(-1106, `Parameter '${name}' sent when not required.`),
  badSymbol: () => fail(-1121, "Invalid symbol."),
  badSide: () => fail(-1117, "Invalid side."),
  badOrderType: () => fail(-1116, "Invalid orderType."),
  badTimeInForce: () => fail(-1115, "Invalid timeInForce."),
  badPrecision: () => fail(-1111, "Precision is over the maximum defined for this asset."),
  badDepthLimit: (limit: string) => fail(-4021, `'${limit}' is not valid depth limit.`),
  startAfterEnd: () => fail(-1023, "Start time is greater than end time."),
  badCombination: () => fail(-1128, "Combination of optional parameters invalid."),
  lookupTooLong: (hours: number) => fail(-1127, `More than ${hours} hours between startTime and endTime.`),
  apiKeyFormat: () => fail(-2014, "API-key format invalid.", 401),
  rejectedKey: () => fail(-2015, "Invalid API-key, IP, or permissions for action.", 401),
  timestampAhead: () => fail(-1021, "Timestamp for this request was 1000ms ahead of the server's time."),
  timestampOutside: () => fail(-1021, "Timestamp for this request is outside of the recvWindow."),
  badSignature: () => fail(-1022, "Signature for this request is not valid."),
  tooManyRequests: (limit: number) =>
    fail(
      -1003,
      `Too many requests; current limit is ${limit} requests per minute. Please use the websocket for live updates to avoid polling the API.`,
      429,
    ),
  /** The 418 ban's text (error-code page, -1003's second form); `until` in ms. */
  ipBanned: (until: number) =>
    fail(
      -1003,
      `Way too many requests; IP banned until ${until}. Please use the websocket for live updates to avoid bans.`,
      418,
    ),
  tooManyOrders: (limit: number, interval: string) =>
    fail(-1015, `Too many new orders; current limit is ${limit} orders per ${interval}.`, 429),
  cancelRejected: () => fail(-2011, "Unknown order sent."),
  /** MAX_OPEN_ORDER_EXCEEDED: the symbol's MAX_NUM_ORDERS open orders are reached. */
  maxOpenOrders: () => fail(-2025, "Reach max open order limit."),
  /** MAX_STOP_ORDER_EXCEEDED: the account's waiting conditional orders are at the cap. */
  maxStopOrders: () => fail(-4045, "Reach max stop order limit."),
  noSuchOrder: () => fail(-2013, "Order does not exist."),
  marginInsufficient: () => fail(-2019, "Margin is insufficient."),
  reduceOnlyRejected: () => fail(-2022, "ReduceOnly Order is rejected."),
  priceAboveMax: () => fail(-4002, "Price greater than max price."),
  qtyNotPositive: () => fail(-4003, "Quantity less than zero."),
  qtyBelowMin: () => fail(-4004, "Quantity less than min quantity."),
  qtyAboveMax: () => fail(-4005, "Quantity greater than max quantity."),
  priceBelowMin: () => fail(-4013, "Price less than min price."),
  priceNotTick: () => fail(-4014, "Price not increased by tick size."),
  badClientOrderId: () => fail(-4015, "Client order id is not valid."),
  priceAboveMultiplier: () => fail(-4016, "Price is higher than mark price multiplier cap."),
  qtyNotStep: () => fail(-4023, "Qty not increased by step size."),
  priceBelowMultiplier: () => fail(-4024, "Price is lower than mark price multiplier floor."),
  badLeverage: (leverage: string) => fail(-4028, `Leverage ${leverage} is not valid`),
  marginTypeUnchanged: () => fail(-4046, "No need to change margin type."),
  marginTypeOpenOrders: () => fail(-4047, "Margin type cannot be changed if there exists open orders."),
  marginTypePosition: () => fail(-4048, "Margin type cannot be changed if there exists position."),
  positionSideUnchanged: () => fail(-4059, "No need to change position side."),
  positionSideMismatch: () => fail(-4061, "Order's position side does not match user's setting."),
  positionSideOpenOrders: () => fail(-4067, "Position side cannot be changed if there exists open orders."),
  positionSideQuantity: () => fail(-4068, "Position side cannot be changed if there exists position."),
  duplicateClientOrderId: () => fail(-4116, "clientOrderId is duplicated"),
  stopOrderTriggering: () => fail(-4117, "stop order is triggering"),
  useAlgoEndpoint: () =>
    fail(-4120, "Order type not supported for this endpoint. Please use the Algo Order API endpoints instead."),
  quantityWithClosePosition: () => fail(-4137, "Quantity must be zero with closePosition equals true"),
  isolatedLeverageReduction: () =>
    fail(-4161, "Leverage reduction is not supported in Isolated Margin Mode with open positions"),
  minNotional: (notional: string) =>
    fail(-4164, `Order's notional must be no smaller than ${notional} (unless you choose reduce only)`),
  isolatedWithMultiAssets: () =>
    fail(-4167, "Unable to adjust to Multi-Assets mode with symbols of USDⓈ-M Futures under isolated-margin mode."),
  multiAssetsWithIsolated: () => fail(-4168, "Unable to adjust to isolated-margin mode under the Multi-Assets mode."),
  multiAssetsUnchanged: () =>
    fail(-4171, "Adjusted asset mode is currently set and does not need to be adjusted repeatedly."),
  fokRejected: () => fail(-5021, "Due to the order could not be filled immediately, the FOK order has been rejected."),
  gtxRejected: () =>
    fail(-5022, "Due to the order could not be executed as maker, the Post Only order will be rejected."),
  limitOnly: () => fail(-5025, "Only limit order is supported."),
  sameOrder: () => fail(-5027, "No need to modify the order."),
};

/** Body of a 503 when the service is down before accepting anything (a definite failure). */
export const SERVICE_UNAVAILABLE = { msg: "Service Unavailable." };

/** Body of a 503 whose request reached the core: the outcome is unknown to the caller. */
export function unknownOutcome(path: string, time: number): Record<string, unknown> {
  return { timestamp: time, path, msg: "Unknown error, please check your request or try again later." };
}
