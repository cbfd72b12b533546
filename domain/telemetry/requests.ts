/**
 * What a request adds to Deno's own server span once it is answered: the
 * route pattern (so spans group by route, not by URL with its ids), the
 * status and the authenticated partner; and the latency histogram by route.
 * No credential, header or query is ever set here.
 */
import { activeSpan } from "./tracing.ts";
import { routeRequestDuration, secondsSince } from "./metrics.ts";

export interface AnsweredRequest {
  method: string;
  /** The matched route pattern, e.g. `/v1/clients/:clientId`; empty when nothing matched. */
  route: string;
  status: number;
  partnerId?: string;
  /** performance.now() when the request came in. */
  startedMs: number;
}

/** The route a request that matched none is counted under: its path would make a series per URL. */
const UNMATCHED = "unmatched";

export function recordAnsweredRequest(request: AnsweredRequest): void {
  const route = request.route || UNMATCHED;
  const span = activeSpan();
  if (span) {
    span.updateName(`${request.method} ${route}`);
    span.setAttribute("http.route", route);
    span.setAttribute("http.response.status_code", request.status);
    if (request.partnerId) span.setAttribute("partner.id", request.partnerId);
  }
  routeRequestDuration.record(secondsSince(request.startedMs), {
    "http.route": route,
    "http.request.method": request.method,
    "http.response.status_code": request.status,
  });
}
