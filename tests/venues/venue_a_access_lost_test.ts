/**
 * ACCESS_LOST for VENUE_A follows a refusal the venue confirms, not its first
 * -2015: a key the venue only blocked for a while stays CONNECTED, the read
 * answers PROVIDER_DOWN, and no `provider.access_lost` reaches the partner.
 * Through the partner API against the simulator over HTTP.
 */
import assert from "node:assert/strict";
import { events, providerAccounts } from "../../db/schema.ts";
import { expectError } from "../_helpers/http.ts";
import { connectedVenueA, setUp } from "../connect/connect_fixture.ts";

Deno.test("VENUE_A: a temporarily blocked key is not ACCESS_LOST; a revoked one is, once", async () => {
  const { env, partner } = await setUp();
  try {
    const keys = await connectedVenueA(env, partner);
    const control = (path: string, init: RequestInit) =>
      fetch(`${env.venueUrls.venueA}/_control${path}`, init).then((r) => r.body?.cancel());
    const accessLost = async () =>
      (await env.deps.db.read.select().from(events)).filter((e) => e.eventType === "provider.access_lost").length;
    const connection = async () => (await env.deps.db.read.select().from(providerAccounts))[0].connection;

    await control(`/accounts/${keys.apiKey}/block`, { method: "POST", body: JSON.stringify({ ms: 600_000 }) });
    for (let i = 0; i < 2; i++) {
      await expectError(await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"), 503, "PROVIDER_DOWN");
    }
    assert.equal(await connection(), "CONNECTED");
    assert.equal(await accessLost(), 0);

    await control(`/accounts/${keys.apiKey}`, { method: "DELETE" });
    await expectError(
      await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"),
      422,
      "PROVIDER_CREDENTIAL_REJECTED",
    );
    assert.equal(await connection(), "ACCESS_LOST");
    assert.equal(await accessLost(), 1);
  } finally {
    await env.close();
  }
});
