/**
 * The one interface the domain uses to talk to a trading venue.
 *
 * Every price, quantity and amount crossing this boundary is a decimal string
 * (never a float), times are epoch milliseconds, and every failure is a
 * `VenueError` with one of a handful of kinds the domain branches on. Venue
 * differences are capability flags, never `if (providerId === ...)` in callers.
 */

export type ProviderId = "VENUE_A" | "VENUE_B";
export const PROVIDER_IDS: readonly ProviderId[] = ["VENUE_A", "VENUE_B"];

/** A non-negative or signed decimal number written as a string, e.g. "0.010" or "-12.5". */
export type Decimal = string;

export type HexAddress = `0x${string}`;

// ---------------------------------------------------------------- errors

/**
 * The small set of failure kinds the domain reasons about.
 * - CREDENTIAL_REJECTED: key/agent refused (revoked, wrong signature, IP, permission).
 * - INSUFFICIENT_MARGIN: the account cannot afford the order.
 * - INVALID_ORDER: the venue refused the order as malformed or against its filters.
 * - RATE_LIMITED: back off; `retryAfterMs` when the venue said how long.
 * - UNAVAILABLE: the venue is down or answered 5xx before accepting anything.
 * - OUTCOME_UNKNOWN: a mutation was sent and no trustworthy answer came back;
 *   the caller must query by client order id, never resend as a new order.
 * - NONCE_SPENT: an action the client signed in their own wallet, with its
 *   nonce inside, that the venue no longer takes: it has that nonce already
 *   (this very action, relayed before by a process that died or whose answer
 *   was lost) or the nonce is out of its bounds. This relay applied nothing;
 *   whether the action took effect earlier only the venue's state can tell:
 *   read it, never relay again.
 */
export type VenueErrorKind =
  | "CREDENTIAL_REJECTED"
  | "INSUFFICIENT_MARGIN"
  | "INVALID_ORDER"
  /** A stop or target whose trigger price the market has already passed: refused, it would fire at once. */
  | "TRIGGER_CROSSED"
  | "RATE_LIMITED"
  | "UNAVAILABLE"
  | "OUTCOME_UNKNOWN"
  | "NONCE_SPENT";

export class VenueError extends Error {
  constructor(
    readonly kind: VenueErrorKind,
    message: string,
    readonly detail: {
      providerId: ProviderId;
      /** The venue's own code or error string, for logs and reconciliation notes. */
      venueCode?: string | number;
      retryAfterMs?: number;
    },
  ) {
    super(message);
    this.name = "VenueError";
  }
}

// ---------------------------------------------------------------- credentials

/**
 * Credentials as the domain stores them: the secret part stays sealed
 * (AES-256-GCM with MASTER_KEY) and is opened only inside the adapter call
 * that signs with it, through the `SecretOpener` the adapter was built with.
 */
export type VenueCredentials =
  | { scheme: "API_KEY"; apiKey: string; sealedApiSecret: SealedSecret }
  | {
    scheme: "AGENT_WALLET";
    /** The client's principal wallet: the account that holds funds and positions. */
    accountAddress: HexAddress;
    agentAddress: HexAddress;
    sealedAgentPrivateKey: SealedSecret;
  };

/**
 * A sealed value with the binding it was sealed under (its owning row and
 * purpose). It opens only under that binding.
 */
export interface SealedSecret {
  sealed: string;
  binding: string;
}

/** Opens a value sealed by the domain's secret box. Implemented in domain/secrets. */
/**
 * The request weight a venue counts per egress IP, shared by every instance
 * that sends from the same IP. An adapter spends each request's weight
 * before sending it; when the share of the moment is spent it is refused
 * with RATE_LIMITED (`retryAfterMs`), so no burst ever reaches the venue's
 * limit and earns a ban.
 */
export interface RequestBudget {
  spend(weight: number): Promise<void>;
  /**
   * Weight a request turned out to cost once answered (VENUE_B's history reads weigh 1 more per 20 items
   * returned): counted against the budget, never refused, since the venue already served it.
   */
  charge?(weight: number): Promise<void>;
}

export interface SecretOpener {
  open(secret: SealedSecret): Promise<string>;
}

// ---------------------------------------------------------------- market data

export interface Market {
  /** Our symbol: base + quote, e.g. "BTCUSDT" (VENUE_A) or "BTCUSDC" (VENUE_B). */
  symbol: string;
  /** The venue's own name, e.g. "BTCUSDT" (VENUE_A) or "BTC" (VENUE_B). */
  providerSymbol: string;
  kind: "PERPETUAL";
  base: string;
  quote: string;
  active: boolean;
  tickSize: Decimal;
  stepSize: Decimal;
  minQty: Decimal;
  minNotionalUsd: Decimal;
  quantityPrecision: number;
  pricePrecision: number;
  maxLeverage: number;
}

export interface BookLevel {
  price: Decimal;
  quantity: Decimal;
}

export interface OrderBook {
  symbol: string;
  bids: BookLevel[];
  asks: BookLevel[];
  /** Venue timestamp of the snapshot, ms. */
  time: number;
}

// ---------------------------------------------------------------- account

export interface Permissions {
  canRead: boolean;
  canFutures: boolean;
  canWithdraw: boolean;
}

/**
 * Outcome of the read-only credential test. `problems` lists account settings
 * the service cannot operate with (codes below); an empty list means ready.
 */
export interface CredentialCheck {
  permissions: Permissions;
  /** Display hint that identifies the account without revealing it, e.g. "…a1b2". */
  accountHint: string | null;
  problems: CredentialProblem[];
  /**
   * When the venue stops accepting the credential (epoch ms): an agent's
   * approval expires. null when it never does or the venue does not say.
   */
  accessExpiresAt: number | null;
}

export type CredentialProblem =
  | "FUTURES_DISABLED"
  | "WITHDRAWALS_ENABLED"
  | "IP_UNRESTRICTED"
  | "HEDGE_MODE_ENABLED"
  | "MULTI_ASSETS_MARGIN_ENABLED"
  | "AGENT_NOT_APPROVED";

export interface Balance {
  asset: string;
  free: Decimal;
  total: Decimal;
  /** null when the venue gives no USD quote for the asset. */
  usdValue: Decimal | null;
}

export type PositionSide = "LONG" | "SHORT";
export type MarginMode = "ISOLATED" | "CROSSED";

export interface Position {
  symbol: string;
  side: PositionSide;
  quantity: Decimal;
  entryPrice: Decimal;
  markPrice: Decimal;
  unrealizedPnlUsd: Decimal;
  leverage: number;
  marginMode: MarginMode;
  liquidationPrice: Decimal | null;
}

/** A position's size alone: what the cheapest account read tells. */
export type PositionSize = Pick<Position, "symbol" | "side" | "quantity">;

export type OrderSide = "BUY" | "SELL";
export type OrderType = "LIMIT" | "MARKET" | "STOP_MARKET" | "TAKE_PROFIT_MARKET";
export type TimeInForce = "GTC" | "IOC" | "FOK" | "POST_ONLY";
export type OrderStatus =
  | "NEW"
  | "PARTIALLY_FILLED"
  | "FILLED"
  | "CANCELED"
  | "REJECTED"
  | "EXPIRED"
  /** A conditional order waiting for its trigger. */
  | "TRIGGER_PENDING";

export interface Order {
  orderId: string;
  clientOrderId: string | null;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  status: OrderStatus;
  quantity: Decimal;
  filledQuantity: Decimal;
  price: Decimal | null;
  averagePrice: Decimal | null;
  triggerPrice: Decimal | null;
  reduceOnly: boolean;
  timeInForce: TimeInForce | null;
  createdAt: number;
  /**
   * A conditional order the venue turned into another order when it triggered
   * (VENUE_A's algo orders): that order's id, which its fills carry.
   */
  executionOrderId?: string | null;
}

/** The spec's Balance view, read live. */
export interface AccountSnapshot {
  balances: Balance[];
  positions: Position[];
  openOrders: Order[];
}

// ---------------------------------------------------------------- orders

export interface PlaceOrderRequest {
  symbol: string;
  side: OrderSide;
  type: OrderType;
  quantity: Decimal;
  /** Required for LIMIT. Rounded by the adapter to the tick, towards the passive side. */
  price?: Decimal;
  /** Required for STOP_MARKET / TAKE_PROFIT_MARKET. */
  triggerPrice?: Decimal;
  timeInForce?: TimeInForce;
  reduceOnly: boolean;
  /**
   * Caller-chosen id the order is found by afterwards (`getOrder`). The venue
   * refuses a second order with it at least while the first is open, and the
   * adapter answers that first order; it is not a permanent idempotency key
   * (VENUE_A accepts the id again once the first order is done), so callers
   * never resend an id and settle an uncertain outcome by querying it.
   * VENUE_A: newClientOrderId (≤ 36 chars); VENUE_B: cloid (16 bytes hex)
   * derived deterministically from it.
   */
  clientOrderId: string;
  /** VENUE_B only (capability builderFee): builder fee in tenths of a basis point for opening orders. */
  builder?: { address: HexAddress; feeTenthsBps: number };
  /** See RequestDeadline. */
  deadline?: RequestDeadline;
}

/**
 * Wall-clock instant (ms) after which the venue must refuse this request: the
 * adapter signs it to expire then (VENUE_A: recvWindow; VENUE_B: expiresAfter)
 * and does not send it at all once too little time is left. The caller records
 * when it sends, so an order the venue has not seen after the deadline (plus
 * transit and clock skew) never will be, however long the adapter waited for
 * its request budget before sending.
 */
export type RequestDeadline = number;

/** Less than this left before its deadline and a request is not sent: it could expire on the way. */
export const DEADLINE_MIN_TIME_LEFT_MS = 500;

export interface ModifyOrderRequest {
  symbol: string;
  clientOrderId: string;
  quantity: Decimal;
  price: Decimal;
}

/**
 * A reduce-only protective order. VENUE_A places these through its algo-order
 * endpoints; VENUE_B as trigger orders with `tpsl`.
 */
export interface ProtectionRequest {
  symbol: string;
  kind: "STOP_LOSS" | "TAKE_PROFIT";
  /** Side of the closing order (SELL protects a LONG). */
  side: OrderSide;
  triggerPrice: Decimal;
  quantity: Decimal;
  clientOrderId: string;
  /** See RequestDeadline. */
  deadline?: RequestDeadline;
}

export interface Fill {
  tradeId: string;
  orderId: string;
  clientOrderId: string | null;
  symbol: string;
  side: OrderSide;
  price: Decimal;
  quantity: Decimal;
  /** Realized PnL of the closing portion as the venue reports it (0 for opening fills). */
  realizedPnl: Decimal;
  /** Commission charged by the venue, positive = paid, in `feeAsset`. Includes the builder fee on VENUE_B. */
  fee: Decimal;
  feeAsset: string;
  /** VENUE_B: the builder-fee part of `fee`, in USDC; null where the venue has no builder fee. */
  builderFee: Decimal | null;
  time: number;
}

export interface FundingPayment {
  symbol: string;
  /** Signed: positive = received. */
  amount: Decimal;
  asset: string;
  time: number;
}

// ---------------------------------------------------------------- VENUE_B extras

/** A user-signed action (approveAgent, approveBuilderFee, usdSend) as signed in the wallet. */
export interface UserSignedAction {
  action: Record<string, unknown> & { type: string; nonce?: number; time?: number };
  nonce: number;
  signature: { r: HexAddress; s: HexAddress; v: number };
}

export interface LedgerEntry {
  time: number;
  hash: HexAddress;
  type: string;
  /** For a transfer: sender, destination, amount (a decimal of `token`), nonce. */
  user: HexAddress;
  destination: HexAddress | null;
  amount: Decimal;
  /** The token's name as the venue reports it ("USDC"). */
  token: string;
  nonce: number | null;
  /**
   * For a VENUE_B `send`: the balances it moved between, as signed ("" the
   * main perp dex, "spot", or a HIP-3 dex's name); null for other entries.
   */
  sourceDex: string | null;
  destinationDex: string | null;
}

/** An agent approval to sign, and what it grants: a name, and a validity the venue ends by pruning the agent. */
export interface AgentApproval {
  action: UserSignedAction["action"];
  name: string;
  validUntil: number;
}

/**
 * capability agentWallet: the approvals a hosted page asks the client's own
 * wallet to sign. The venue's protocol decides their shape; the domain only
 * stores what was built and relays what was signed.
 */
export interface WalletApprovals {
  /** A fresh agent key pair; the private key must go straight into the secret box. */
  newAgentKey(): { privateKey: HexAddress; address: HexAddress };
  /**
   * approveAgent for `agentAddress`, signed on the wallet's chain; the nonce
   * comes from the venue's clock. With the name the venue will list the agent
   * under and the end of its validity (epoch ms), for the page to show.
   */
  agentApproval(input: { agentAddress: HexAddress; signatureChainId: HexAddress }): AgentApproval;
  /** approveBuilderFee up to `maxFeeTenthsBps` for the platform's builder. */
  builderApproval(
    input: { builder: HexAddress; maxFeeTenthsBps: number; signatureChainId: HexAddress },
  ): UserSignedAction["action"];
  /**
   * A transfer of `amount` USDC from `from` to `destination` whose ledger
   * entry carries its signed nonce (a payment). Where it is taken from
   * depends on `from`'s account, which the venue is asked about.
   */
  usdcTransfer(
    input: { from: HexAddress; destination: HexAddress; amount: Decimal; signatureChainId: HexAddress },
  ): Promise<UserSignedAction["action"]>;
  /** The action as `eth_signTypedData_v4` takes it (JSON-safe). */
  typedDataForWallet(action: UserSignedAction["action"]): Record<string, unknown>;
  /** The signed action from the wallet's 65-byte hex signature; throws RangeError when malformed. */
  withSignature(action: UserSignedAction["action"], signature: string): UserSignedAction;
  /** The wallet that signed (lowercase); throws when the signature cannot be recovered. */
  signerOf(signed: UserSignedAction): HexAddress;
}

// ---------------------------------------------------------------- pushes

/**
 * A change the venue pushed about one watched account: enough to know what
 * to read, never the fact itself (facts are still read, so a push that is
 * lost or duplicated costs a delay, never a wrong record).
 */
export type AccountPush =
  /**
   * An order of the account changed: placed, filled in part or whole, cancelled, expired, its trigger fired.
   * `status` is the venue's word for it, a hint: VENUE_B's pushes do not say whether an open order waits
   * for a trigger (it reads NEW) and report a fired trigger as NEW (the order now executes: read its fills).
   * `clientOrderId` is what the venue pushes (VENUE_B: the cloid); null when it pushes none.
   */
  | { kind: "ORDER"; symbol: string; clientOrderId: string | null; status: OrderStatus; at: number }
  /** The account traded in `symbol` (a fill: read its fills), where the venue says so apart from any order status. */
  | { kind: "TRADE"; symbol: string; at: number }
  /** A funding payment was booked for the account. */
  | { kind: "FUNDING"; at: number }
  /** Balances or positions changed otherwise (transfer, liquidation, auto-deleveraging, margin). */
  | { kind: "ACCOUNT"; at: number };

/**
 * What a live watch pushes. Fills always (TRADE or ORDER); a venue may push
 * them for more accounts than it pushes everything for (VENUE_B: a user's own
 * subscriptions for a few users per IP, the public trades naming both sides
 * for the rest), and what is not pushed must still be polled.
 */
export interface PushCoverage {
  /** Every order change, including cancels and expiries that trade nothing. */
  orders: boolean;
  /** Funding payments. */
  funding: boolean;
}

/** What a watch reports to whoever keeps the account (domain/execution). */
export interface AccountWatcher {
  onPush(push: AccountPush): void;
  /**
   * Pushes flow, and anything before this moment may have been missed (the
   * first connection, a reconnection after a gap, a renewed stream key): read
   * the account whole once. `coverage` says what is pushed from now on.
   */
  onLive(coverage: PushCoverage): void;
  /** Pushes stopped and are being restored: until the next `onLive`, the account must be polled. */
  onLost(reason: string): void;
}

/** A running watch of one account; `close` ends it (and frees what it held at the venue). */
export interface AccountWatch {
  close(): Promise<void>;
}

// ---------------------------------------------------------------- the adapter

export interface VenueCapabilities {
  /** Opening orders carry a builder fee that the account must have approved. */
  builderFee: boolean;
  /** Connected through an agent wallet approved by the client's principal wallet. */
  agentWallet: boolean;
  /** Commission may be charged in an asset other than the quote (e.g. BNB fee burn). */
  feeInOtherAsset: boolean;
  /** The venue keeps a ledger of user transfers usable as payment proof. */
  paymentLedger: boolean;
}

/** The builder's account mode at the venue and whether builder fees accrue to it in that mode. */
export interface BuilderStanding {
  mode: string;
  accruesFees: boolean;
}

export interface VenueAdapter {
  readonly providerId: ProviderId;
  readonly name: string;
  readonly kind: "PERP_CEX" | "PERP_DEX";
  readonly scheme: VenueCredentials["scheme"];
  readonly capabilities: VenueCapabilities;
  /**
   * How long a signed order request stays acceptable to the venue (VENUE_A:
   * its recvWindow; VENUE_B: the actions' expiresAfter): callers give each send
   * a deadline this far after they record it, so an uncertain outcome can be
   * settled by querying once it has passed.
   */
  readonly requestTtlMs: number;
  /**
   * Request weight one order placement costs against the egress IP's limit
   * (VENUE_A: 0, orders count per account; VENUE_B: 1 per exchange action):
   * a fan-out reserves it ahead to pace itself.
   */
  readonly placementWeight: number;

  listMarkets(): Promise<Market[]>;
  getOrderBook(symbol: string, depth?: number): Promise<OrderBook>;

  /** Read-only check of what the credential may do; never places anything. */
  testCredentials(credentials: VenueCredentials): Promise<CredentialCheck>;
  getAccount(credentials: VenueCredentials): Promise<AccountSnapshot>;
  /**
   * The open positions' sizes, by the venue's cheapest read of them (VENUE_A:
   * positionRisk, weight 5; VENUE_B: clearinghouseState, weight 2): the
   * hourly check of an account whose changes are pushed.
   */
  getPositionSizes(credentials: VenueCredentials): Promise<PositionSize[]>;

  placeOrder(credentials: VenueCredentials, order: PlaceOrderRequest): Promise<Order>;
  /** The order as the venue knows it, or null when the venue never saw that client order id. */
  getOrder(credentials: VenueCredentials, symbol: string, clientOrderId: string): Promise<Order | null>;
  cancelOrder(credentials: VenueCredentials, symbol: string, clientOrderId: string): Promise<Order>;
  modifyOrder(credentials: VenueCredentials, request: ModifyOrderRequest): Promise<Order>;
  setLeverage(credentials: VenueCredentials, symbol: string, leverage: number): Promise<void>;
  setMarginMode(credentials: VenueCredentials, symbol: string, mode: MarginMode): Promise<void>;

  placeProtection(credentials: VenueCredentials, request: ProtectionRequest): Promise<Order>;
  /**
   * Where the venue takes several orders in one request (VENUE_B: one action,
   * one unit of weight): a position's legs at once, answering each leg's
   * order or the venue's refusal of it. A failure of the request is thrown.
   */
  placeProtections?(credentials: VenueCredentials, requests: ProtectionRequest[]): Promise<(Order | VenueError)[]>;
  cancelProtection(credentials: VenueCredentials, symbol: string, clientOrderId: string): Promise<void>;
  /** Open protective (conditional) orders, which some venues keep apart from regular orders. */
  listProtections(credentials: VenueCredentials, symbol?: string): Promise<Order[]>;

  getFills(credentials: VenueCredentials, query: { symbol?: string; since: number }): Promise<Fill[]>;
  getFunding(credentials: VenueCredentials, query: { since: number }): Promise<FundingPayment[]>;

  /** capability builderFee: the approved maximum for `builder`, in tenths of a basis point. */
  getMaxBuilderFee?(user: HexAddress, builder: HexAddress): Promise<number>;
  /**
   * capability builderFee: the builder's own account mode, and whether fees accrue to it there (the venue
   * credits builder fees only to a builder in standard mode). Cached by the adapter for a while; `fresh`
   * reads it anew and refreshes the cache.
   */
  getBuilderStanding?(builder: HexAddress, options?: { fresh?: boolean }): Promise<BuilderStanding>;
  /**
   * capability agentWallet: whether the venue holds `agent` approved, and not
   * expired, to trade for `user` (the answer to a relay whose nonce is spent).
   */
  isAgentApproved?(user: HexAddress, agent: HexAddress): Promise<boolean>;
  /** capability agentWallet: build and check the approvals the client signs in their wallet. */
  walletApprovals?: WalletApprovals;
  /**
   * capability agentWallet / paymentLedger: relay an action the client signed
   * in their wallet. NONCE_SPENT when the venue no longer takes its nonce.
   */
  submitUserSignedAction?(signed: UserSignedAction): Promise<void>;
  /** capability paymentLedger: the user's non-funding ledger updates since `since`. */
  getLedger?(user: HexAddress, since: number): Promise<LedgerEntry[]>;

  /**
   * Push updates for one account, within the venue's limits on connections,
   * streams and users per IP (the adapter multiplexes watches over as few
   * connections as the venue allows). Reports `onLive` once pushes flow, and
   * `onLost` whenever they stop, while it restores them on its own. A watch
   * beyond what the venue allows from this IP reports `onLost` and stays
   * there: the account is polled. Watches the principal's account, never the
   * agent's. VENUE_B: beyond its users per IP a watch is live on fills only
   * (PushCoverage), and gets a freed user slot when another watch closes.
   */
  watchAccount?(credentials: VenueCredentials, watcher: AccountWatcher): AccountWatch;
}

export type VenueRegistry = Record<ProviderId, VenueAdapter>;
