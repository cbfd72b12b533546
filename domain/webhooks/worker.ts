/**
 * The webhook sender. Each pass turns new events into deliveries and starts
 * the attempts now due, without waiting for them: a partner's hanging
 * endpoint keeps its own few slots busy for up to 10 seconds, never the
 * others' deliveries, the API or the jobs. The service runs a pass every
 * second (new events go out within seconds of their commit), and one soon
 * after an attempt frees its slot, so a busy partner's backlog drains at the
 * pace of its endpoint rather than four a second; the
 * `webhook-delivery` job runs one and waits for its attempts (QA drives the
 * retry schedule with it and the test clock).
 */
import type { Ctx } from "../context.ts";
import { errorFields } from "../logger.ts";
import { attemptDelivery, claimDue, enqueueNewEvents } from "./deliveries.ts";

/**
 * Attempts in flight at once, in all and per partner. Each answer costs the
 * event loop about a millisecond of bookkeeping: at 128 in flight the API's
 * p99 rose to 57 ms during a burst, at 64 it stays under 30 ms. Four per
 * partner leave most slots to the healthy when a few endpoints hang.
 */
const IN_FLIGHT = 64;
const PER_PARTNER = 4;
/** After a slot frees, the next pass waits this long, so the attempts finishing meanwhile share it. */
const FOLLOW_UP_MS = 25;

export interface PassSummary {
  enqueued: number;
  attempted: number;
  delivered: number;
  retrying: number;
  dead: number;
}

export class WebhookWorker {
  readonly #inFlight = new Map<string, number>();
  readonly #running = new Set<Promise<void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #followUp: ReturnType<typeof setTimeout> | undefined;
  #passing: Promise<unknown> | null = null;

  constructor(private readonly ctx: Ctx) {}

  /** One pass; its attempts run on. Answers the summary so far (attempt outcomes arrive as they finish). */
  async pass(summary: PassSummary = emptySummary()): Promise<PassSummary> {
    summary.enqueued += await enqueueNewEvents(this.ctx);
    const free = IN_FLIGHT - this.#running.size;
    if (free <= 0) return summary;
    for (const delivery of await claimDue(this.ctx, free, PER_PARTNER, this.#inFlight)) {
      summary.attempted++;
      this.#inFlight.set(delivery.partnerId, (this.#inFlight.get(delivery.partnerId) ?? 0) + 1);
      const running: Promise<void> = attemptDelivery(this.ctx, delivery)
        .then((status) => {
          if (status === "DELIVERED") summary.delivered++;
          else if (status === "DEAD") summary.dead++;
          else summary.retrying++;
        })
        .catch((error) => this.ctx.logger.error("webhook attempt failed", errorFields(error)))
        .finally(() => {
          this.#running.delete(running);
          const left = (this.#inFlight.get(delivery.partnerId) ?? 1) - 1;
          if (left) this.#inFlight.set(delivery.partnerId, left);
          else this.#inFlight.delete(delivery.partnerId);
          this.#followUpSoon();
        });
      this.#running.add(running);
    }
    return summary;
  }

  /** A pass whose attempts are all awaited (the job's run). */
  async passAndWait(): Promise<PassSummary> {
    const summary = await this.pass();
    await Promise.all(this.#running);
    return summary;
  }

  start(intervalMs = 1_000): void {
    this.#timer = setInterval(() => this.#passInBackground(), intervalMs);
  }

  #passInBackground(): void {
    if (this.#passing) return;
    this.#passing = this.pass().catch((error) => this.ctx.logger.error("webhook pass failed", errorFields(error)))
      .finally(() => this.#passing = null);
  }

  /** A slot freed: while the sender runs, a pass follows shortly (one for all the slots freed meanwhile). */
  #followUpSoon(): void {
    if (this.#timer === undefined || this.#followUp !== undefined) return;
    this.#followUp = setTimeout(() => {
      this.#followUp = undefined;
      this.#passInBackground();
    }, FOLLOW_UP_MS);
  }

  /** No new pass; the one under way and every attempt in flight are waited for. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#followUp);
    this.#followUp = undefined;
    await this.#passing;
    await Promise.all(this.#running);
  }
}

function emptySummary(): PassSummary {
  return { enqueued: 0, attempted: 0, delivered: 0, retrying: 0, dead: 0 };
}
