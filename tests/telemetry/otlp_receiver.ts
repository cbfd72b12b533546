/**
 * A small OTLP/HTTP receiver on loopback, in the `http/json` encoding Deno
 * exports when `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: it keeps every body
 * as received (to look for secrets) and the spans, metrics and log records
 * flattened for assertions.
 */

/** An OTLP attribute list, as `{key, value: {stringValue | intValue | doubleValue | boolValue}}`. */
type OtlpAttributes = { key: string; value: Record<string, unknown> }[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

export interface ReceivedPoint {
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
}

export interface ReceivedLog {
  traceId: string;
  spanId: string;
  body: string;
}

export class OtlpReceiver {
  readonly bodies: string[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly points: ReceivedPoint[] = [];
  readonly logs: ReceivedLog[] = [];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  constructor() {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
      const text = await request.text();
      this.bodies.push(text);
      this.#take(new URL(request.url).pathname, JSON.parse(text));
      return Response.json({});
    });
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  /** Waits (bounded) until `ready` holds for what arrived: exports are batched and periodic. */
  async waitFor(what: string, ready: () => boolean): Promise<void> {
    for (let attempt = 0; attempt < 300 && !ready(); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!ready()) throw new Error(`The receiver never got ${what}`);
  }

  // deno-lint-ignore no-explicit-any
  #take(path: string, body: any): void {
    if (path === "/v1/traces") {
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            this.spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link: ReceivedSpan) => ({ traceId: link.traceId, spanId: link.spanId })),
            });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            const data = metric.histogram ?? metric.sum ?? metric.gauge ?? {};
            for (const point of data.dataPoints ?? []) {
              this.points.push({ metric: metric.name, unit: metric.unit, attributes: attributesOf(point.attributes) });
            }
          }
        }
      }
    } else if (path === "/v1/logs") {
      for (const resource of body.resourceLogs ?? []) {
        for (const scope of resource.scopeLogs ?? []) {
          for (const record of scope.logRecords ?? []) {
            this.logs.push({
              traceId: record.traceId ?? "",
              spanId: record.spanId ?? "",
              body: String(record.body?.stringValue ?? ""),
            });
          }
        }
      }
    }
  }
}

function attributesOf(list: OtlpAttributes | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));
}
