/**
 * Bench targets (serve_target.ts) started in processes of their own, and the
 * way figures measured against them are summarised and printed.
 */
import type { CreatePartnerInput } from "../../domain/partners/types.ts";
import type { WrkResult } from "./wrk.ts";

const TARGET = new URL("./serve_target.ts", import.meta.url).pathname;

/** The partner the benches serve: both venues, no strategy, no fees; its request limit as the bench needs. */
export function benchPartnerInput(requestsPerMinute: number): CreatePartnerInput {
  return {
    name: "Bench",
    grants: { providers: ["VENUE_A", "VENUE_B"], strategies: [], capabilities: [] },
    riskEnvelope: { maxLeverage: 10, maxMarginPerTradeUsd: 100, maxConcurrentTrades: 3, maxDailyLossUsd: 100 },
    contract: {
      subscriptionMonthlyUsd: 0,
      currency: "USDT",
      performanceFeePercent: 0.2,
      performancePeriod: "MONTHLY",
      carryPolicy: "NO_CARRY",
      dueDays: 5,
      subscriptionProviders: [],
    },
    builder: { feeTenthsBps: 0 },
    returnUrlOrigins: [],
    limits: { requestsPerMinute, ordersPerMinute: 1000 },
  };
}

export interface TargetInfo {
  port: number;
  auth?: string;
  userId?: string;
  databaseUrl?: string;
  partnerId?: string;
}

export interface Target {
  child: Deno.ChildProcess;
  info: TargetInfo;
  url: string;
}

/** A serve_target.ts process, once it has printed the JSON line that says it listens. */
export async function startTarget(args: string[]): Promise<Target> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TARGET, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`bench target ${args.join(" ")} exited early`);
    text += value;
  }
  reader.releaseLock();
  const info = JSON.parse(text.split("\n")[0]) as TargetInfo;
  return { child, info, url: `http://127.0.0.1:${info.port}` };
}

export async function stopTarget(target: Target) {
  target.child.kill("SIGTERM");
  await target.child.status;
  await target.child.stdout.cancel().catch(() => {});
}

/** The result with the median throughput (its own latencies with it). */
export function median(results: WrkResult[]): WrkResult {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)];
}

/** One printed figure: throughput, its share of the bare Deno.serve, p50 and p99, and anything suspect. */
export function row(label: string, result: WrkResult, bare: WrkResult, note: string) {
  const share = `${(result.rps / bare.rps * 100).toFixed(1)} %`;
  const problems = result.non2xx + result.socketErrors
    ? `  (${result.non2xx} non-2xx, ${result.socketErrors} socket errors)`
    : "";
  console.log(
    `${label.padEnd(40)} ${result.rps.toFixed(0).padStart(8)} req/s ${share.padStart(8)}  p50 ${
      result.p50Ms.toFixed(2).padStart(6)
    } ms  p99 ${result.p99Ms.toFixed(2).padStart(6)} ms   ${note}${problems}`,
  );
}
