/**
 * Shared setup of the VENUE_A tests: a simulator on a loopback port, the real
 * adapter pointed at it over HTTP, and a secret box like the domain's.
 */
import { bytesToBase64, createSecretBox, secretBinding, type SecretBox } from "../../domain/secrets/secret_box.ts";
import type { VenueAdapter, VenueCredentials } from "../../venues/types.ts";
import { createVenueAAdapter, type VenueAAdapterDeps } from "../../venues/venue_a/adapter.ts";
import { encodeParams, type Params, signPayload } from "../../venues/venue_a/auth.ts";
import { createVenueASimulator } from "../../venues/sim/venue_a/mod.ts";

/** The binding test credentials are sealed under (no stored row owns them). */
export const TEST_BINDING = secretBinding("test_credentials", "venue-a", "api_secret");

export type ApiKeyCredentials = Extract<VenueCredentials, { scheme: "API_KEY" }>;

export interface SimAccountKeys {
  apiKey: string;
  apiSecret: string;
  credentials: ApiKeyCredentials;
}

export interface VenueAHarness extends AsyncDisposable {
  /** The futures host. */
  baseUrl: string;
  /** The spot host (`/sapi`), serving the same accounts. */
  spotBaseUrl: string;
  /** The user data stream's WebSocket base (the futures host with a ws scheme). */
  streamUrl: string;
  secrets: SecretBox;
  /** Calls a `/_control` route and returns its JSON, failing on a non-2xx answer. */
  control<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  account(options?: Record<string, unknown>): Promise<SimAccountKeys>;
  adapter(overrides?: Partial<VenueAAdapterDeps>): VenueAdapter;
  /** A hand-made signed request, for wire-level assertions. */
  signed(
    method: string,
    path: string,
    params: Params,
    keys: { apiKey: string; apiSecret: string },
    options?: { timestamp?: number; recvWindow?: number; secret?: string; inBody?: boolean },
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startVenueA(options: { now?: () => number } = {}): Promise<VenueAHarness> {
  const clock = options.now ?? (() => Date.now());
  const hosts = createVenueASimulator({ now: clock });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, hosts.futures.fetch);
  const spotServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, hosts.spot.fetch);
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  const spotBaseUrl = `http://127.0.0.1:${spotServer.addr.port}`;
  const secrets = await createSecretBox(bytesToBase64(crypto.getRandomValues(new Uint8Array(32))));

  async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${baseUrl}/_control${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`Control ${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json as T;
  }

  let closed = false;
  async function close() {
    if (closed) return;
    closed = true;
    await hosts.close();
    await server.shutdown();
    await spotServer.shutdown();
  }

  return {
    baseUrl,
    spotBaseUrl,
    streamUrl: baseUrl.replace(/^http/, "ws"),
    secrets,
    control,
    async account(accountOptions = {}) {
      const { apiKey, apiSecret } = await control<{ apiKey: string; apiSecret: string }>(
        "POST",
        "/accounts",
        accountOptions,
      );
      return {
        apiKey,
        apiSecret,
        credentials: { scheme: "API_KEY", apiKey, sealedApiSecret: await secrets.seal(apiSecret, TEST_BINDING) },
      };
    },
    adapter(overrides = {}) {
      return createVenueAAdapter({ baseUrl, spotBaseUrl, secrets, ...overrides });
    },
    async signed(method, path, params, keys, signOptions = {}) {
      const payload = encodeParams({
        ...params,
        recvWindow: signOptions.recvWindow,
        timestamp: signOptions.timestamp ?? clock(),
      });
      const signature = signPayload(signOptions.secret ?? keys.apiSecret, payload);
      const signedText = `${payload}&signature=${signature}`;
      const inBody = signOptions.inBody ?? (method === "POST" || method === "PUT");
      const host = path.startsWith("/sapi/") ? spotBaseUrl : baseUrl;
      const response = await fetch(`${host}${path}${inBody ? "" : `?${signedText}`}`, {
        method,
        headers: {
          "X-MBX-APIKEY": keys.apiKey,
          ...(inBody ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
        },
        body: inBody ? signedText : undefined,
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
