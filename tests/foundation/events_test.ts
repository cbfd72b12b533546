import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator } from "../_helpers/http.ts";

Deno.test("GET /v1/events", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const other = await createPartner(env);
    // Three more facts about the partner: a rotation, a contract change, a credential revocation.
    const issued = await expectJson(
      await operator(env, "POST", `/operator/v1/partners/${partner.partnerId}/credentials`, { overlapSeconds: 3600 }),
      201,
    );
    await expectJson(
      await operator(env, "PUT", `/operator/v1/partners/${partner.partnerId}/contract`, {
        subscriptionMonthlyUsd: 59.9,
        currency: "USDT",
        performanceFeePercent: 0.25,
        performancePeriod: "MONTHLY",
        carryPolicy: "CARRY",
        dueDays: 5,
        subscriptionProviders: ["VENUE_A"],
      }),
      200,
    );
    await expectJson(
      await operator(
        env,
        "DELETE",
        `/operator/v1/partners/${partner.partnerId}/credentials/${issued.credential.clientId}`,
      ),
      200,
    );

    const all = (await expectJson(await partner.call("GET", "/v1/events"), 200)).events;

    await t.step("lists only the caller's events, in order, with the envelope", () => {
      assert.deepEqual(all.map((e: { eventType: string }) => e.eventType), [
        "tenant.updated",
        "credential.issued",
        "credential.issued",
        "tenant.updated",
        "credential.revoked",
      ]);
      for (const event of all) {
        assert.equal(event.principalId, partner.partnerId);
        assert.equal(event.tenantId, partner.partnerId);
        assert.equal(event.type, event.eventType);
        assert.match(event.eventId, /^evt_/);
        assert.ok(!Number.isNaN(Date.parse(event.occurredAt)));
      }
      assert.ok(!JSON.stringify(all).includes(issued.credential.clientSecret));
    });

    await t.step("pages with limit and resumes from next without gaps or repeats", async () => {
      const seen: string[] = [];
      let after = "";
      for (let page = 0; page < 5; page++) {
        const body = await expectJson(
          await partner.call("GET", `/v1/events?limit=2${after ? `&after=${after}` : ""}`),
          200,
        );
        seen.push(...body.events.map((e: { eventId: string }) => e.eventId));
        after = body.next;
        if (body.events.length === 0) break;
      }
      assert.deepEqual(seen, all.map((e: { eventId: string }) => e.eventId));
      const empty = await expectJson(await partner.call("GET", `/v1/events?after=${after}`), 200);
      assert.deepEqual(empty.events, []);
      assert.equal(empty.next, after);
    });

    await t.step("filters by type", async () => {
      const body = await expectJson(await partner.call("GET", "/v1/events?type=credential.revoked"), 200);
      assert.equal(body.events.length, 1);
    });

    await t.step("another partner's eventId is not a valid cursor", async () => {
      const foreign = (await expectJson(await other.call("GET", "/v1/events"), 200)).events[0].eventId;
      await expectError(await partner.call("GET", `/v1/events?after=${foreign}`), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/events?limit=501"), 400, "VALIDATION_ERROR");
    });
  } finally {
    await env.close();
  }
});
