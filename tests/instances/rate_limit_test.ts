/**
 * A partner's limits counted once for the whole fleet: three instances on one
 * database behind a round-robin proxy (and a fourth killed mid-minute) grant
 * together what one instance would, within the bound in docs/api-notes.md. The limit is
 * 600 requests a minute, so each instance claims room in chunks of
 * 600 / 60 = 10 (domain/usage/rate_limiter.ts); orders (5 a minute) in chunks
 * of 1. Each minute is a different frozen minute of the instances' QA clocks.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../../db/client.ts";
import { chunkOf } from "../../domain/usage/rate_limiter.ts";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { type Answer, type Credential, Fleet, OPERATOR_TOKEN, type Target } from "./fleet.ts";

const LIMIT = 600;
const ORDER_LIMIT = 5;
const CHUNK = chunkOf(LIMIT);
const INSTANCES = 3;
const minute = (n: number) => Date.parse("2026-12-01T10:00:00.000Z") + n * 60_000;

Deno.test("three instances behind a round-robin proxy hold a partner's requestsPerMinute and ordersPerMinute within the stated bound; a killed instance's counts survive", async (t) => {
  assert.equal(CHUNK, 10);
  const fleet = await Fleet.start({ instances: INSTANCES });
  let extra: WatchedService | null = null;
  try {
    const created = await fleet.operator(
      "POST",
      "/operator/v1/partners",
      partnerBody({ partnerId: "limited", limits: { requestsPerMinute: LIMIT, ordersPerMinute: ORDER_LIMIT } }),
    );
    assert.equal(created.status, 201, created.text);
    const credential: Credential = created.body.credential;
    const health = (target: Target = "proxy") => fleet.partner(credential, "GET", "/v1/health", { target });
    /** Every instance's business clock at `at` (each keeps its own). */
    const setClocks = async (at: number) => {
      for (let index = 0; index < INSTANCES; index++) {
        const set = await fleet.operator("PUT", "/operator/v1/clock", { now: new Date(at).toISOString() }, index);
        assert.equal(set.status, 200, set.text);
      }
    };
    const assertRefused = (answer: Answer, retryAfter: string) => {
      assert.equal(answer.status, 429, answer.text);
      assert.equal(answer.body.error.code, "RATE_LIMITED");
      assert.equal(answer.headers.get("retry-after"), retryAfter);
    };
    const rowCount = async (kind: "REQUEST" | "ORDER", at: number) => {
      const db = await openDatabase(fleet.databaseUrl);
      try {
        const rows = await db.read.all<[number]>(
          `SELECT count FROM usage_buckets WHERE partner_id = 'limited' AND kind = '${kind}' AND window_start = ${at}`,
        );
        return rows[0]?.[0] ?? 0;
      } finally {
        db.close();
      }
    };

    await t.step(
      "concurrent calls through the proxy: never more than the limit, exactly the limit once every instance refuses",
      async () => {
        await setClocks(minute(0) + 15_000);
        let granted = 0;
        // Waves of 12 concurrent calls (4 per instance) until a whole wave is refused: then no instance holds room.
        for (let wave = 0; wave < 100; wave++) {
          const answers = await Promise.all(Array.from({ length: 12 }, () => health()));
          for (const answer of answers) {
            if (answer.status === 200) granted++;
            else assertRefused(answer, "45");
          }
          if (answers.every((answer) => answer.status === 429)) break;
        }
        assert.ok(granted <= LIMIT, `${granted} granted in a minute of ${LIMIT}`);
        assert.equal(granted, LIMIT, "the fleet granted the whole minute, and not one call more");
        for (const index of [0, 1, 2]) assertRefused(await health(index), "45");
        assert.equal(await rowCount("REQUEST", minute(0)), LIMIT);
      },
    );

    let grantedInMinute1 = 0;
    await t.step(
      `one call at a time: the first refusal comes after at least limit - (instances - 1) x chunk = ${
        LIMIT - (INSTANCES - 1) * CHUNK
      } grants`,
      async () => {
        await setClocks(minute(1) + 30_000);
        for (let call = 0; call <= LIMIT; call++) {
          const answer = await health();
          if (answer.status === 429) {
            assertRefused(answer, "30");
            break;
          }
          assert.equal(answer.status, 200, answer.text);
          grantedInMinute1++;
        }
        assert.ok(
          grantedInMinute1 >= LIMIT - (INSTANCES - 1) * CHUNK,
          `first refusal after ${grantedInMinute1} grants`,
        );
        assert.ok(grantedInMinute1 <= LIMIT);
        // The others may still spend what they hold, and no more: the row never passes the limit.
        let more = 0;
        for (const index of [0, 1, 2]) {
          for (let answer = await health(index); answer.status === 200; answer = await health(index)) more++;
        }
        assert.ok(more <= (INSTANCES - 1) * CHUNK, `${more} more after the first refusal`);
        grantedInMinute1 += more;
        assert.equal(grantedInMinute1, LIMIT);
      },
    );

    await t.step(
      "order calls count once across the fleet (chunks of one): exactly ordersPerMinute pass, refused calls count nothing",
      async () => {
        await setClocks(minute(2) + 50_000);
        const answers: Answer[] = [];
        for (let call = 0; call < 9; call++) {
          answers.push(await fleet.partner(credential, "POST", "/v1/orders/prepare", { body: {} }));
        }
        const passed = answers.filter((answer) => answer.status !== 429);
        assert.equal(passed.length, ORDER_LIMIT, answers.map((answer) => answer.status).join(","));
        for (const answer of answers.slice(ORDER_LIMIT)) assertRefused(answer, "10");
        assert.equal(await rowCount("ORDER", minute(2)), ORDER_LIMIT);
      },
    );

    await t.step(
      "GET /v1/usage: closed minutes read the calls granted, plus at most (instances - 1) x chunk not yet given back",
      async () => {
        await setClocks(minute(3) + 5_000);
        // One call per instance: each sees the new minute and gives back what it held, in the background.
        for (const index of [0, 1, 2]) assert.equal((await health(index)).status, 200);
        const usage = await fleet.partner(credential, "GET", "/v1/usage?minutes=4");
        assert.equal(usage.status, 200, usage.text);
        const count = (at: number, kind: string) =>
          usage.body.buckets.find((b: { window: string; kind: string }) =>
            b.window === new Date(at).toISOString() && b.kind === kind
          )?.count;
        assert.equal(count(minute(0), "REQUEST"), LIMIT);
        assert.equal(count(minute(1), "REQUEST"), LIMIT);
        assert.equal(count(minute(2), "ORDER"), ORDER_LIMIT);
        const requests2 = count(minute(2), "REQUEST");
        assert.ok(
          requests2 >= ORDER_LIMIT && requests2 <= ORDER_LIMIT + (INSTANCES - 1) * CHUNK,
          `minute 2 reads ${requests2} requests for ${ORDER_LIMIT} granted`,
        );
        assert.deepEqual(usage.body.limits, { requestsPerMinute: LIMIT, ordersPerMinute: ORDER_LIMIT });
      },
    );

    await t.step(
      "an instance killed mid-minute: its grants stay counted (plus at most one chunk), the others grant only the rest",
      async () => {
        const killed = extra = new WatchedService({ ...fleet.env, PORT: String(freePort()) });
        await waitUntilUp(killed.url);
        await setClocks(minute(4) + 20_000);
        const set = await killed.fetch("/operator/v1/clock", {
          method: "PUT",
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ now: new Date(minute(4) + 20_000).toISOString() }),
        });
        assert.equal(set.status, 200, await set.text());
        const authorization = `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`;
        const KILLED_GRANTS = 25;
        for (let call = 0; call < KILLED_GRANTS; call++) {
          const answer = await killed.fetch("/v1/health", { headers: { authorization } });
          assert.equal(answer.status, 200, await answer.text());
        }
        await killed.stop("SIGKILL");
        const counted = await rowCount("REQUEST", minute(4));
        assert.ok(
          counted >= KILLED_GRANTS && counted <= KILLED_GRANTS + CHUNK,
          `${counted} counted for ${KILLED_GRANTS} granted by the killed instance`,
        );
        let rest = 0;
        for (let index = 0; index < INSTANCES; index++) {
          for (let answer = await health(index); answer.status === 200; answer = await health(index)) rest++;
        }
        assert.equal(rest, LIMIT - counted, "the survivors granted exactly the room the row had left");
        assert.ok(KILLED_GRANTS + rest >= LIMIT - CHUNK && KILLED_GRANTS + rest <= LIMIT);
        assert.equal(await rowCount("REQUEST", minute(4)), LIMIT);
      },
    );

    await t.step("at shutdown every instance gives back what it held: the rows are the calls granted", async () => {
      for (const [index, service] of fleet.instances.entries()) {
        const { status } = await service.stop("SIGTERM");
        assert.equal(status.code, 0, `instance ${index}`);
      }
      assert.equal(await rowCount("REQUEST", minute(1)), grantedInMinute1);
      assert.equal(await rowCount("REQUEST", minute(2)), ORDER_LIMIT);
      // Minute 3: a call per instance and the usage read.
      assert.equal(await rowCount("REQUEST", minute(3)), INSTANCES + 1);
    });
  } finally {
    if (extra) await (extra as WatchedService).stop("SIGKILL").catch(() => {});
    await fleet.stop();
  }
});
