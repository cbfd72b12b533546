/**
 * The soak's trading load, driven over HTTP like the operator and the venues
 * would: each cycle posts the same signal at both venues (fan-out, entries and
 * their protective orders), then moves the simulators' mark price through the
 * targets (two in three cycles: the first target fills, the stop moves to
 * break-even, the second closes) or through the stop (the third), running the
 * reconcile job after each move so the positions close and their results and
 * events are written. Every answer is counted, so the soak can show the load
 * kept working.
 */
import { SIM_MARKET, type SimulatorUrls } from "./seed_accounts.ts";
import { simControl } from "./simulator_process.ts";

const ENTRY = 65010;
const SIGNAL_AT = { VENUE_A: "BTCUSDT", VENUE_B: "BTCUSDC" } as const;

export interface TradingCounts {
  cycles: number;
  signals: number;
  admitted: number;
  dispatched: number;
  refused: Record<string, number>;
  reconcileRuns: number;
  positionsClosed: number;
  stopsPlacedAgain: number;
  failures: number;
  lastFailure?: string;
}

export class TradingLoad {
  readonly counts: TradingCounts = {
    cycles: 0,
    signals: 0,
    admitted: 0,
    dispatched: 0,
    refused: {},
    reconcileRuns: 0,
    positionsClosed: 0,
    stopsPlacedAgain: 0,
    failures: 0,
  };

  constructor(
    private readonly service: string,
    private readonly operatorToken: string,
    private readonly venues: SimulatorUrls,
    private readonly runId: string,
  ) {}

  /** Cycles, one started every `cycleSeconds` at most, until `until` (ms since the epoch). */
  async run(until: number, cycleSeconds: number): Promise<void> {
    while (Date.now() < until) {
      const started = Date.now();
      try {
        await this.#cycle(this.counts.cycles + 1);
        this.counts.cycles++;
      } catch (error) {
        // Counted and shown, not fatal: a soak reports what broke and keeps the other loads going.
        this.counts.failures++;
        this.counts.lastFailure = String(error);
      }
      const rest = Math.min(started + cycleSeconds * 1000, until) - Date.now();
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  }

  async #cycle(cycle: number): Promise<void> {
    await this.#mark(65000);
    await Promise.all((["VENUE_A", "VENUE_B"] as const).map(async (providerId) => {
      const summary = await this.#operator("POST", "/operator/v1/signals", {
        signalId: `soak-${this.runId}-${cycle}-${providerId}`,
        strategyId: "trend-follow",
        providerId,
        symbol: SIGNAL_AT[providerId],
        side: "BUY",
        entryPrice: ENTRY,
        stopLossPrice: ENTRY - 2000,
        takeProfits: [{ price: ENTRY + 2000, share: 0.5 }, { price: ENTRY + 4000, share: 0.5 }],
        confidence: 80,
      });
      this.counts.signals++;
      this.counts.admitted += summary.admitted;
      this.counts.dispatched += summary.dispatched;
      for (const [code, n] of Object.entries(summary.refused as Record<string, number>)) {
        this.counts.refused[code] = (this.counts.refused[code] ?? 0) + n;
      }
    }));
    const moves = cycle % 3 === 0 ? [ENTRY - 2100] : [ENTRY + 2090, ENTRY + 4090];
    for (const price of moves) {
      await this.#mark(price);
      await this.#reconcile();
    }
    // Once more: fills found after a close become results, leftover protective orders are cancelled.
    await this.#reconcile();
  }

  async #mark(price: number): Promise<void> {
    await simControl(this.venues.venueA, "PUT", `/markets/${SIM_MARKET.VENUE_A}`, { markPrice: String(price) });
    await simControl(this.venues.venueB, "PUT", `/markets/${SIM_MARKET.VENUE_B}`, { markPrice: String(price) });
  }

  async #reconcile(): Promise<void> {
    const { summary } = await this.#operator("POST", "/operator/v1/jobs/reconcile/run");
    this.counts.reconcileRuns++;
    this.counts.positionsClosed += summary.positionsClosed ?? 0;
    this.counts.stopsPlacedAgain += summary.stopsPlacedAgain ?? 0;
  }

  // deno-lint-ignore no-explicit-any
  async #operator(method: string, path: string, body?: unknown): Promise<any> {
    const response = await fetch(`${this.service}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.operatorToken}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }
}
