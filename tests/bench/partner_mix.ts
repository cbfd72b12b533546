/** The TypeScript side of partner_mix.lua: where it is, its routes' names, and what its done() prints. */

export const MIX_SCRIPT = new URL("./partner_mix.lua", import.meta.url).pathname;
/** The same mix with a pause before each request (its fourth argument, ms). */
export const PACED_MIX_SCRIPT = new URL("./partner_mix_paced.lua", import.meta.url).pathname;

/** The script's route names, as a partner would read them. */
export const ROUTES: Record<string, string> = {
  status: "GET /v1/users/:id/status",
  automation: "GET /v1/users/:id/automation",
  setup: "GET /v1/users/:id/setup",
  performance: "GET /v1/users/:id/performance",
  statements: "GET /v1/users/:id/statements",
  create: "POST /v1/users (new client, IK)",
  setup_put: "PUT /v1/users/:id/setup (IK)",
  events: "GET /v1/events?after=…&limit=100",
};

export interface RouteFigures {
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

/** The `MIX` lines partner_mix.lua's done() prints. */
export function parseMix(output: string) {
  const routes = new Map<string, RouteFigures>();
  for (const match of output.matchAll(/^MIX route=(\w+) requests=(\d+) errors=(\d+) p50=([\d.]+) p99=([\d.]+)$/gm)) {
    const [, name, requests, errors, p50, p99] = match;
    routes.set(name, { requests: +requests, errors: +errors, p50Ms: +p50, p99Ms: +p99 });
  }
  const totals = /^MIX duration_us=(\d+) unmatched=(\d+)$/m.exec(output);
  return {
    routes,
    seconds: Number(totals?.[1] ?? NaN) / 1e6,
    unmatched: Number(totals?.[2] ?? NaN),
    firstError: /^MIX first error: (.*)$/m.exec(output)?.[1],
  };
}
