/**
 * Stopping the service without dropping work. Exiting on the signal would cut
 * requests in flight, leaving idempotency keys unanswered and venue calls
 * unrecorded; instead the server stops accepting connections, what already
 * started (requests, job runs) gets a grace period to finish, and only then are
 * the rate limiter's open counts written and the database closed.
 */
import type { Database } from "../db/client.ts";
import { errorFields, type Logger } from "./logger.ts";
import type { RateLimiter } from "./usage/rate_limiter.ts";

export interface ShutdownParts {
  /** The `Deno.serve` server: `shutdown()` stops accepting and resolves once its requests are answered. */
  server: { shutdown(): Promise<void> };
  rateLimiter: Pick<RateLimiter, "flush">;
  db: Pick<Database, "close">;
  logger: Logger;
  graceSeconds: number;
  /** Work the service runs on its own (the webhook sender): stopped, its attempts in flight waited for. */
  background?: { stop(): Promise<void> }[];
}

/** Exit code of a shutdown that cut work still in flight: the grace period ran out, or a second signal came. */
export const EXIT_WORK_CUT = 1;

export class Lifecycle {
  #closing = false;
  #requestsInFlight = 0;
  readonly #jobRuns = new Set<Promise<void>>();

  /** `handler`, counting unanswered requests: `shutdown()` only tells when none is left, a cut says how many. */
  countRequests(handler: Deno.ServeHandler): Deno.ServeHandler {
    return async (request, info) => {
      this.#requestsInFlight++;
      try {
        return await handler(request, info);
      } finally {
        this.#requestsInFlight--;
      }
    };
  }

  /**
   * Starts a scheduled run, or skips it once shutdown has begun: Deno.cron
   * cannot unregister a job, so its ticks keep coming until the process exits.
   */
  readonly gateJobRun = async (run: () => Promise<void>): Promise<void> => {
    if (this.#closing) return;
    const running = run();
    this.#jobRuns.add(running);
    try {
      await running;
    } finally {
      this.#jobRuns.delete(running);
    }
  };

  /** Shut down on the first of `signals`; a second one while shutting down exits at once. */
  shutDownOn(signals: Deno.Signal[], parts: ShutdownParts): void {
    for (const signal of signals) {
      Deno.addSignalListener(signal, () => {
        if (this.#closing) {
          parts.logger.error("second signal during shutdown: exiting now", { signal });
          Deno.exit(EXIT_WORK_CUT);
        }
        this.#shutDown(signal, parts).then((code) => Deno.exit(code));
      });
    }
  }

  /** Drain, flush, close; answers the exit code (0, or EXIT_WORK_CUT when the grace period ran out). */
  async #shutDown(signal: Deno.Signal, { server, rateLimiter, db, logger, graceSeconds, background }: ShutdownParts) {
    this.#closing = true;
    const started = performance.now();
    const elapsedMs = () => Math.round(performance.now() - started);
    const drained = Promise.allSettled([
      server.shutdown(),
      ...this.#jobRuns,
      ...(background ?? []).map((work) => work.stop()),
    ]).then(() => true);
    logger.info("shutting down", {
      signal,
      requestsInFlight: this.#requestsInFlight,
      jobRunsInFlight: this.#jobRuns.size,
      graceSeconds,
    });

    let deadline: ReturnType<typeof setTimeout> | undefined;
    const inTime = await Promise.race([
      drained,
      new Promise<false>((resolve) => deadline = setTimeout(() => resolve(false), graceSeconds * 1000)),
    ]);
    clearTimeout(deadline);
    if (inTime) {
      logger.info("drained", { durationMs: elapsedMs() });
    } else {
      // Whatever still runs is cut by the exit that follows: its clients see a dropped connection.
      logger.error("grace period over: cutting work still in flight", {
        requestsInFlight: this.#requestsInFlight,
        jobRunsInFlight: this.#jobRuns.size,
        graceSeconds,
      });
    }

    // Only after the drain: the requests it waited for still counted usage.
    await rateLimiter.flush().catch((error) => logger.error("usage flush failed", errorFields(error)));
    db.close();
    logger.info("closed", { durationMs: elapsedMs() });
    return inTime ? 0 : EXIT_WORK_CUT;
  }
}
