/**
 * Payments are detected, not only confirmed by hand: each payments run reads
 * the Transfer logs of the networks' tokens to the addresses instructions
 * name (the platform recipient of each EVM transfer, each deposit invoice's
 * own address), block range by block range from a cursor stored per network
 * (evm_scan_cursors), and credits what pays an instruction by the very rules
 * of a confirmation: the transaction is verified as `confirm` verifies it
 * (token, recipient, payer, amount, time after the instruction,
 * confirmations) and credited by the same `creditTransfer`, so one
 * transaction credits one obligation whoever sees it first. An EVM transfer
 * is recognised by its exact amount (the instruction's tag) from its
 * declared payer; an invoice by any transfer to its address. A transfer
 * mined before its instruction expired counts whenever it is seen
 * (payment_expiry.ts).
 *
 * Only blocks under the network's confirmations are read, at most
 * `RANGES_PER_RUN` ranges of `EVM_LOG_RANGE` blocks per network and run,
 * yielding between ranges. A range's cursor moves on only once every match
 * in it was judged: a node that cannot answer stops that network's scan
 * until the next run (the others go on), while a payment whose crediting
 * fails in an unforeseen way is logged and passed over. A reorg under the
 * cursor (the block before it changed hash) sends it back by the network's
 * finality depth; reading blocks again is harmless. Blocks made while no
 * payable instruction was open are passed over unread.
 */
import { and, asc, eq, gte, inArray, lte, min, sql } from "drizzle-orm";
import { EVM_NETWORKS, type EvmNetwork } from "../../config.ts";
import { withTransaction } from "../../db/client.ts";
import { evmScanCursors, payments } from "../../db/schema.ts";
import { type BlockFacts, CHAIN_IDS, type EvmReader, type TransferLog } from "../../venues/evm/transfers.ts";
import { DAY_MS, wallClockNow } from "../clock.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { errorFields } from "../logger.ts";
import { BLOCK_TIME_TOLERANCE_MS, type ConfirmOutcome, creditTransfer, verify } from "./confirm_payment.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { INVOICE_TTL_MS } from "./instructions.ts";
import type { PaymentRow } from "./payment_view.ts";

/** Ranges of `EVM_LOG_RANGE` blocks read per network and run: the rest waits for the next run. */
export const RANGES_PER_RUN = 10;
/** `to` addresses per `eth_getLogs` call (nodes such as geth refuse more than 1,000 per topic). */
const RECIPIENTS_PER_CALL = 500;
/** How long after its expiry an instruction still pulls a fresh cursor back to its issue. */
const FRESH_LOOKBACK_MS = DAY_MS;
/** Statuses of an instruction a transfer may still pay (a SUPERSEDED one honours a transfer already made). */
const PAYABLE = ["PENDING", "SUBMITTED", "EXPIRED", "SUPERSEDED"];
const ON_CHAIN = ["EVM_TRANSFER", "DEPOSIT_INVOICE"];
/** Verdicts on a transaction whose log the node just answered that say the node cannot tell now. */
const UNDECIDED = [
  "PAYMENT_NOT_VERIFIED",
  "PAYMENT_AWAITING_CONFIRMATIONS",
  "PAYMENT_TX_NOT_FOUND",
  "PAYMENT_WRONG_NETWORK",
];

export interface TransferScanSummary {
  /** Blocks whose logs were read this run, all networks. */
  blocksScanned: number;
  /** Blocks passed over unread: no instruction a transfer may pay was open while they were made. */
  blocksSkipped: number;
  /** Payments credited from a transfer found in them. */
  detected: number;
  /** Networks whose scan stopped (node unreachable or wrong), and payments whose crediting failed unexpectedly. */
  scanFailed: number;
  /** `<network>:<next block>` per network scanned, e.g. `arbitrum:1042 bnb:77`. */
  scanCursors: string;
}

/** A node that cannot judge a match now: the range is read again at the next run. */
class NodeUnavailable extends Error {}

export async function scanTransfers(ctx: Ctx): Promise<TransferScanSummary> {
  const summary: TransferScanSummary = {
    blocksScanned: 0,
    blocksSkipped: 0,
    detected: 0,
    scanFailed: 0,
    scanCursors: "",
  };
  const cursors: string[] = [];
  for (const network of EVM_NETWORKS.filter((n) => ctx.config.evmRpc[n])) {
    try {
      const next = await scanNetwork(ctx, network, summary);
      if (next !== null) cursors.push(`${network}:${next}`);
    } catch (error) {
      summary.scanFailed++;
      ctx.logger.warn("payments scan stopped", { networkId: network, ...errorFields(error) });
    }
  }
  summary.scanCursors = cursors.join(" ");
  return summary;
}

/** Scan one network as far as this run allows; answers the cursor's next block (null: nothing to scan for yet). */
async function scanNetwork(ctx: Ctx, network: EvmNetwork, summary: TransferScanSummary): Promise<number | null> {
  const reader = evmReaderOf(ctx, network);
  const chainId = await reader.chainId();
  if (chainId !== CHAIN_IDS[network]) throw new Error(`The node answers chain ${chainId}, not ${CHAIN_IDS[network]}`);
  const tokens = [...new Set(Object.values(ctx.config.evmTokens[network]))] as string[];
  if (!tokens.length) return null;
  // The newest block with the network's confirmations on top: a transfer above it could not credit yet.
  const safeHead = (await reader.head()) - ctx.config.evmConfirmations[network] + 1;
  let cursor = await cursorOf(ctx, network, reader, safeHead);
  if (!cursor) return null;
  cursor = await afterReorg(ctx, network, reader, cursor, safeHead);
  cursor = await pastIdleBlocks(ctx, network, reader, cursor, safeHead, summary);
  for (let ranges = 0; ranges < RANGES_PER_RUN && cursor.nextBlock <= safeHead; ranges++) {
    const from = cursor.nextBlock;
    const to = Math.min(safeHead, from + ctx.config.evmLogRange - 1);
    const [first, last] = await Promise.all([reader.block(from), reader.block(to)]);
    const candidates = await payableBetween(ctx, network, first.timeMs, last.timeMs);
    if (candidates.length) {
      const logs = await logsTo(reader, tokens, candidates, from, to);
      summary.detected += await creditMatches(ctx, logs, candidates, summary);
    }
    cursor = await saveCursor(ctx, network, last);
    summary.blocksScanned += to - from + 1;
    await yieldToEventLoop();
  }
  return cursor.nextBlock;
}

interface Cursor {
  nextBlock: number;
  lastBlockHash: string | null;
}

/**
 * The network's cursor. A fresh one starts at the first block dated at or
 * after the earliest instruction a transfer may still pay (issued, or lapsed
 * less than a day ago), less the drift a confirmation tolerates; with none
 * there is nothing to scan for, and no cursor yet.
 */
async function cursorOf(ctx: Ctx, network: EvmNetwork, reader: EvmReader, safeHead: number): Promise<Cursor | null> {
  const [stored] = await ctx.db.read.select().from(evmScanCursors).where(eq(evmScanCursors.networkId, network));
  if (stored) return stored;
  const [{ earliest }] = await ctx.db.read.select({ earliest: min(payments.issuedWallAt) }).from(payments).where(and(
    eq(payments.networkId, network),
    inArray(payments.method, ON_CHAIN),
    inArray(payments.status, PAYABLE),
    gte(payments.issuedWallAt, wallClockNow() - FRESH_LOOKBACK_MS - INVOICE_TTL_MS),
    sql`${payments.issuedWallAt} + (${payments.expiresAt} - ${payments.issuedAt}) >= ${
      wallClockNow() - FRESH_LOOKBACK_MS
    }`,
  ));
  if (earliest === null) return null;
  const start = await firstBlockFrom(reader, earliest - BLOCK_TIME_TOLERANCE_MS, safeHead);
  const before = start > 0 ? await reader.block(start - 1) : null;
  await withTransaction(ctx.db, (tx) =>
    tx.insert(evmScanCursors).values({
      networkId: network,
      nextBlock: start,
      lastBlockHash: before?.hash ?? null,
      updatedAt: ctx.clock.now(),
    }).onConflictDoNothing());
  ctx.logger.info("payments scan starts", { networkId: network, block: start });
  const [row] = await ctx.db.read.select().from(evmScanCursors).where(eq(evmScanCursors.networkId, network));
  return row;
}

/**
 * Blocks in which no instruction a transfer may pay was open are not read:
 * the cursor moves on to the first block of the earliest one still open
 * after it (none: to the head). After a quiet month the scan would otherwise
 * spend hours of runs reading empty ranges before it reached a payment.
 */
async function pastIdleBlocks(
  ctx: Ctx,
  network: EvmNetwork,
  reader: EvmReader,
  cursor: Cursor,
  safeHead: number,
  summary: TransferScanSummary,
): Promise<Cursor> {
  if (cursor.nextBlock > safeHead) return cursor;
  const { timeMs } = await reader.block(cursor.nextBlock);
  const [{ opens }] = await ctx.db.read.select({ opens: min(payments.issuedWallAt) }).from(payments).where(and(
    eq(payments.networkId, network),
    gte(payments.issuedWallAt, timeMs - INVOICE_TTL_MS),
    sql`${payments.issuedWallAt} + (${payments.expiresAt} - ${payments.issuedAt}) >= ${timeMs}`,
    inArray(payments.method, ON_CHAIN),
    inArray(payments.status, PAYABLE),
  ));
  if (opens !== null && opens - BLOCK_TIME_TOLERANCE_MS <= timeMs) return cursor;
  const target = opens === null
    ? safeHead + 1
    : await firstBlockFrom(reader, opens - BLOCK_TIME_TOLERANCE_MS, safeHead, cursor.nextBlock);
  if (target <= cursor.nextBlock) return cursor;
  summary.blocksSkipped += target - cursor.nextBlock;
  return await saveCursor(ctx, network, await reader.block(target - 1));
}

/** The first block from `low` dated at or after `timeMs` (binary search; `safeHead + 1` when none is yet). */
async function firstBlockFrom(reader: EvmReader, timeMs: number, safeHead: number, low = 0): Promise<number> {
  let high = safeHead + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if ((await reader.block(middle)).timeMs >= timeMs) high = middle;
    else low = middle + 1;
  }
  return Math.max(low, 0);
}

/**
 * The block before the cursor changed (a reorg replaced it), or the chain
 * no longer reaches the cursor (a shorter fork, a node reset in QA): read
 * again from the network's finality depth back.
 */
async function afterReorg(
  ctx: Ctx,
  network: EvmNetwork,
  reader: EvmReader,
  cursor: Cursor,
  safeHead: number,
): Promise<Cursor> {
  if (cursor.nextBlock === 0 || cursor.lastBlockHash === null) return cursor;
  const behind = cursor.nextBlock > safeHead + 1;
  if (!behind && (await reader.block(cursor.nextBlock - 1)).hash === cursor.lastBlockHash) return cursor;
  const nextBlock = Math.max(0, Math.min(cursor.nextBlock, safeHead + 1) - ctx.config.evmFinality[network]);
  const rewound = nextBlock > 0 ? await reader.block(nextBlock - 1) : null;
  ctx.logger.warn("payments scan: a reorg replaced scanned blocks; reading them again", {
    networkId: network,
    fromBlock: nextBlock,
    toBlock: cursor.nextBlock - 1,
  });
  const moved = { nextBlock, lastBlockHash: rewound?.hash ?? null };
  await withTransaction(ctx.db, (tx) =>
    tx.update(evmScanCursors).set({ ...moved, updatedAt: ctx.clock.now() })
      .where(eq(evmScanCursors.networkId, network)));
  return moved;
}

async function saveCursor(ctx: Ctx, network: EvmNetwork, last: BlockFacts): Promise<Cursor> {
  const moved = { nextBlock: last.number + 1, lastBlockHash: last.hash };
  await withTransaction(ctx.db, (tx) =>
    tx.update(evmScanCursors).set({ ...moved, updatedAt: ctx.clock.now() })
      .where(eq(evmScanCursors.networkId, network)));
  return moved;
}

/**
 * Instructions a transfer in blocks dated `fromMs`..`toMs` may pay: open
 * (issued, not expired) at some time of the range, by the wall clock. Bound
 * below by the longest lifetime, so the index on the issue time serves.
 */
async function payableBetween(ctx: Ctx, network: EvmNetwork, fromMs: number, toMs: number): Promise<PaymentRow[]> {
  return await ctx.db.read.select().from(payments).where(and(
    eq(payments.networkId, network),
    gte(payments.issuedWallAt, fromMs - INVOICE_TTL_MS),
    lte(payments.issuedWallAt, toMs + BLOCK_TIME_TOLERANCE_MS),
    sql`${payments.issuedWallAt} + (${payments.expiresAt} - ${payments.issuedAt}) >= ${fromMs}`,
    inArray(payments.method, ON_CHAIN),
    inArray(payments.status, PAYABLE),
  )).orderBy(asc(payments.issuedAt));
}

async function logsTo(
  reader: EvmReader,
  tokens: string[],
  candidates: PaymentRow[],
  fromBlock: number,
  toBlock: number,
): Promise<TransferLog[]> {
  const recipients = [...new Set(candidates.map((payment) => payment.recipient!))];
  const logs: TransferLog[] = [];
  for (let at = 0; at < recipients.length; at += RECIPIENTS_PER_CALL) {
    logs.push(
      ...await reader.transferLogs({
        tokens,
        recipients: recipients.slice(at, at + RECIPIENTS_PER_CALL),
        fromBlock,
        toBlock,
      }),
    );
  }
  return logs.sort((a, b) => a.blockNumber - b.blockNumber);
}

/** Does the log name this instruction: its token to its recipient, and for a transfer its payer and exact amount. */
export function logNames(payment: PaymentRow, log: TransferLog): boolean {
  if (payment.tokenAddress !== log.token || payment.recipient !== log.to) return false;
  // An invoice's address is its own: any wallet, any transfer to it (verification sums the transaction's).
  if (payment.payerAddress === null) return true;
  return payment.payerAddress === log.from && BigInt(payment.tokenAmount!) === log.value;
}

/** Credit each log's instruction (open ones first, then lapsed, oldest first); answers how many were credited. */
async function creditMatches(
  ctx: Ctx,
  logs: TransferLog[],
  candidates: PaymentRow[],
  summary: TransferScanSummary,
): Promise<number> {
  const order = (payment: PaymentRow) => ["PENDING", "SUBMITTED"].includes(payment.status) ? 0 : 1;
  const ranked = [...candidates].sort((a, b) => order(a) - order(b));
  const paid = new Set<string>();
  const spent = new Set<string>();
  let credited = 0;
  for (const log of logs) {
    for (const payment of ranked.filter((candidate) => logNames(candidate, log))) {
      if (spent.has(log.txHash)) break;
      if (paid.has(payment.paymentId)) continue;
      try {
        const outcome = await creditFound(ctx, payment, log.txHash);
        if (!outcome) continue;
        // Recorded on the payment, credited or held for review: the transaction is spent either way.
        paid.add(payment.paymentId);
        spent.add(log.txHash);
        if (outcome.credited) credited++;
      } catch (error) {
        if (error instanceof NodeUnavailable) throw error;
        summary.scanFailed++;
        ctx.logger.error("payments scan: crediting failed", { paymentId: payment.paymentId, ...errorFields(error) });
      }
    }
  }
  return credited;
}

/**
 * Verify `hash` for the instruction as a confirmation does and credit it by
 * confirm's own path (`creditTransfer`: mined before the instruction
 * expired, the transaction credited nothing else). Answers what was
 * recorded, null when nothing was; throws NodeUnavailable when the node
 * cannot tell.
 */
async function creditFound(ctx: Ctx, payment: PaymentRow, hash: string): Promise<ConfirmOutcome | null> {
  const verdict = await verify(ctx, payment, hash);
  if ("code" in verdict) {
    // The log was read under the confirmations: only a node that cannot answer, or a reorg since, leaves it
    // undecided, and the range is read again next run.
    if (UNDECIDED.includes(verdict.code)) {
      throw new NodeUnavailable(`The transfer ${hash} could not be verified now (${verdict.code})`);
    }
    ctx.logger.debug("payments scan: a transfer that does not pay", {
      paymentId: payment.paymentId,
      code: verdict.code,
    });
    return null;
  }
  try {
    return await creditTransfer(ctx, payment, hash, verdict, { transaction: (work) => withTransaction(ctx.db, work) });
  } catch (error) {
    // Mined after the instruction expired, or the transaction credited another payment first: it pays nothing here.
    if (error instanceof ApiError && ["PAYMENT_EXPIRED", "TX_ALREADY_USED"].includes(error.code)) return null;
    throw error;
  }
}
