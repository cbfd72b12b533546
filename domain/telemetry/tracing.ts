/**
 * Spans through the OpenTelemetry API, which Deno's built-in telemetry
 * serves when `OTEL_DENO=true` (docs/operations.md); otherwise every call
 * here is the API's no-op, which costs next to nothing on the hot path.
 *
 * Deno already opens one server span per request (`Deno.serve`) and a client
 * span per `fetch`; the request middleware names the server span after its
 * route instead of opening a second one, and the spans here nest inside it
 * because the active context follows awaits.
 */
import { type Attributes, INVALID_SPAN_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

const tracer = trace.getTracer("partner-service");

/**
 * Whether Deno exports telemetry (spans and metrics): only when started with
 * `OTEL_DENO=true`, which a running process cannot change. Without it,
 * `inSpan` does not go through the API's no-op tracer at all (its context
 * switch and closures were ~1 % of a fan-out's CPU: a span per venue call
 * and per write group), and a request records nothing when answered.
 */
export const TELEMETRY_EXPORTED = Deno.env.get("OTEL_DENO")?.toLowerCase() === "true";
const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Attribute values are ids, names, counts and outcomes only: never a credential, a body or a URL with a query. */
export type SpanAttributes = Attributes;

/**
 * Runs `work` inside a new active span: its children (venue calls, write
 * groups, Deno's fetch spans) nest under it. A throw marks the span as an
 * error by the error's class and `kind` (a VenueError's), never its message,
 * which may quote a request.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!TELEMETRY_EXPORTED) return work(NOT_RECORDING);
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setAttribute("error.type", errorType(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The request's span (Deno's server span), if telemetry is on. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/** Ids of the active span, for log lines; undefined when there is none (or telemetry is off). */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  if (!context || !trace.isSpanContextValid(context)) return undefined;
  return { traceId: context.traceId, spanId: context.spanId };
}

/** A VenueError's kind, else the error's class. */
export function errorType(error: unknown): string {
  const kind = (error as { kind?: unknown } | null)?.kind;
  if (typeof kind === "string") return kind;
  return error instanceof Error ? error.constructor.name : typeof error;
}
