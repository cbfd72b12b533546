/**
 * Telemetry switched off (this test process has no OTEL_DENO): the
 * instrumentation is transparent. Spans answer what their work answers and
 * rethrow what it throws, unchanged; log lines carry no trace ids.
 */
import assert from "node:assert/strict";
import { inSpan } from "../../domain/telemetry/tracing.ts";
import { observeVenueCall } from "../../domain/telemetry/venue_calls.ts";
import { createLogger } from "../../domain/logger.ts";
import { VenueError } from "../../venues/types.ts";

Deno.test("with telemetry off, a span answers its work's value and rethrows its work's error", async () => {
  assert.ok(!Deno.env.get("OTEL_DENO"), "this test runs with telemetry off");
  assert.equal(await inSpan("work", {}, () => Promise.resolve(42)), 42);
  const refused = new VenueError("RATE_LIMITED", "budget spent", { providerId: "VENUE_A" });
  const call = { venue: "VENUE_A" as const, endpoint: "POST /fapi/v1/order", weight: 1 };
  await assert.rejects(observeVenueCall(call, () => Promise.reject(refused)), (error) => error === refused);
});

Deno.test("with telemetry off, a log line written inside a span has no trace ids", async () => {
  const lines: string[] = [];
  const logger = createLogger("info", (line) => lines.push(line));
  await inSpan("work", {}, () => Promise.resolve(logger.info("inside", { job: "reconcile" })));
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]);
  assert.equal(line.message, "inside");
  assert.equal(line.traceId, undefined);
  assert.equal(line.spanId, undefined);
});
