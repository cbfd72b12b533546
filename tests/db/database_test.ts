/**
 * The db/ layer on the embedded libSQL engine and on `@libsql/client` over a
 * local file (asynchronous, as a server is). On a libSQL server itself:
 * remote_test.ts.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { type Database, openDatabase, withTransaction } from "../../db/client.ts";
import { clients, partners, settings } from "../../db/schema.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { assertFailingUnitsRollBackAlone } from "./write_units.ts";
import { openEmbedded } from "../../db/embedded.ts";

const ENGINES = ["embedded", "client"] as const;

async function fresh(engine: (typeof ENGINES)[number]): Promise<Database> {
  const dir = await Deno.makeTempDir({ prefix: "svc-db-" });
  return await openDatabase(`file:${dir}/db.db`, { engine });
}

for (const engine of ENGINES) {
  Deno.test(`db (${engine}): concurrent write units commit together, and a failing one rolls back alone`, async () => {
    const db = await fresh(engine);
    try {
      await assertFailingUnitsRollBackAlone(db, engine === "embedded");
    } finally {
      db.close();
    }
  });

  Deno.test(`db (${engine}): a nested withTransaction joins the open one instead of waiting for it`, async () => {
    const db = await fresh(engine);
    try {
      const put = (key: string) => withTransaction(db, (tx) => tx.insert(settings).values({ key, value: "v" }));
      // Before the open transaction travelled with the call, the inner call queued behind the outer one forever.
      await withTransaction(db, async () => {
        await put("outer");
        await put("inner");
      });
      await assert.rejects(
        withTransaction(db, async () => {
          await put("doomed-inner");
          throw new Error("the outer work fails after the inner write");
        }),
        /outer work fails/,
      );
      const keys = (await db.read.select().from(settings)).map((row) => row.key).sort();
      assert.deepEqual(keys, ["inner", "outer"], "the inner write rolled back with its outer transaction");

      let late!: Promise<unknown>;
      await withTransaction(db, () => {
        late = new Promise((resolve) => setTimeout(resolve, 5)).then(() => put("late"));
        return Promise.resolve();
      });
      await assert.rejects(late, /after its transaction ended/);
    } finally {
      db.close();
    }
  });

  Deno.test(`db (${engine}): the read handle refuses writes, and a transaction's result comes after its commit`, async () => {
    const db = await fresh(engine);
    try {
      if (engine === "embedded") {
        await assert.rejects(() => db.read.insert(settings).values({ key: "x", value: "y" }));
      }
      const value = await withTransaction(db, async (tx) => {
        await tx.insert(settings).values({ key: "committed", value: "yes" });
        return "done";
      });
      assert.equal(value, "done");
      const [row] = await db.read.select().from(settings).where(eq(settings.key, "committed"));
      assert.equal(row.value, "yes");
    } finally {
      db.close();
    }
  });

  Deno.test(`db (${engine}): strings, JSON columns and integers round-trip exactly`, async () => {
    const db = await fresh(engine);
    try {
      const externalUserId = 'ação 😀 "quoted" \\ back\u2028slash';
      await withTransaction(db, async (tx) => {
        await tx.insert(partners).values({
          partnerId: "p",
          name: "P",
          status: "ACTIVE",
          grants: { providers: [], strategies: [], capabilities: [] },
          envelope: { maxLeverage: 1, maxMarginPerTradeMicros: 1, maxConcurrentTrades: 1, maxDailyLossMicros: 1 },
          builderFeeTenthsBps: 0,
          returnUrlOrigins: [],
          requestsPerMinute: 1,
          ordersPerMinute: 1,
          createdAt: 1,
          updatedAt: 1,
        });
        await tx.insert(clients).values({
          partnerId: "p",
          tenantId: "p",
          externalUserId,
          status: "ACTIVE",
          strategySelection: ["a", "b"],
          createdAt: 1_793_613_600_123,
          updatedAt: 1_793_613_600_123,
        });
      });
      const row = await findClient(db.read, "p", externalUserId);
      assert.equal(row?.externalUserId, externalUserId);
      assert.deepEqual(row?.strategySelection, ["a", "b"]);
      assert.equal(row?.createdAt, 1_793_613_600_123);
      assert.equal(await findClient(db.read, "p", "missing"), null);
    } finally {
      db.close();
    }
  });
}

Deno.test("db: migrations apply once, and a reopened database keeps its data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-db-" });
  const url = `file:${dir}/db.db`;
  const first = await openDatabase(url);
  await withTransaction(first, (tx) => tx.insert(settings).values({ key: "kept", value: "1" }));
  first.close();
  const again = await openDatabase(url);
  try {
    const migrations = await again.read.values(`SELECT count(*) FROM __drizzle_migrations`);
    const files = [...Deno.readDirSync(new URL("../../db/migrations", import.meta.url))].filter((f) =>
      f.name.endsWith(".sql")
    );
    assert.equal(Number(migrations[0][0]), files.length);
    assert.equal((await again.read.select().from(settings)).length, 1);
  } finally {
    again.close();
  }
});

Deno.test("db: a fresh file another instance holds while it starts is opened once that one lets go, not refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-db-" });
  // Another instance mid-start: it holds the fresh file exclusively (as switching it to WAL does) for 300 ms.
  const other = openEmbedded(`${dir}/db.db`, { busyTimeoutMs: 0 });
  other.exec("BEGIN EXCLUSIVE");
  const released = new Promise<void>((resolve) =>
    setTimeout(() => {
      other.exec("COMMIT");
      other.close();
      resolve();
    }, 300)
  );
  const db = await openDatabase(`file:${dir}/db.db`);
  try {
    await released;
    const [[mode]] = await db.read.values<[string]>("PRAGMA journal_mode");
    assert.equal(mode, "wal");
  } finally {
    db.close();
  }
});
