/**
 * The suite's check of answers against their declared schemas
 * (routes/middleware/response_check.ts): production no longer parses its
 * answers, so this check is what stops a wrong value or an undeclared field
 * from reaching a partner unnoticed.
 */
import assert from "node:assert/strict";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { declaredAnswers, mismatch, responseCheck } from "../../routes/middleware/response_check.ts";
import type { AppEnv } from "../../routes/env.ts";

const Client = z.object({
  status: z.enum(["ACTIVE", "SUSPENDED"]),
  tags: z.array(z.object({ name: z.string() })),
  note: z.string().optional(),
});

Deno.test("an answer matches its schema only with declared fields and accepted values", () => {
  assert.equal(mismatch(Client, { status: "ACTIVE", tags: [{ name: "a" }] }), undefined);
  assert.match(mismatch(Client, { status: "DELETED", tags: [] })!, /status/);
  assert.match(mismatch(Client, { status: "ACTIVE", tags: [], secretHash: "x" })!, /secretHash/);
  assert.match(mismatch(Client, { status: "ACTIVE", tags: [{ name: "a", internalId: 7 }] })!, /tags\[0\]\.internalId/);
});

Deno.test("the middleware turns an answer that breaks its route's schema into a 500 naming it", async () => {
  const api = new OpenAPIHono<AppEnv>();
  const route = (path: string) =>
    createRoute({
      method: "get",
      path,
      request: { params: z.object({ id: z.string() }) },
      responses: { 200: { description: "A client.", content: { "application/json": { schema: Client } } } },
    });
  api.openapi(route("/good/{id}"), (c) => c.json({ status: "ACTIVE" as const, tags: [] }, 200));
  api.openapi(route("/leaky/{id}"), (c) => c.json({ status: "ACTIVE" as const, tags: [], secretHash: "x" }, 200));
  const app = new OpenAPIHono<AppEnv>();
  app.use("*", responseCheck(declaredAnswers(api)));
  app.route("/", api);
  const errors: string[] = [];
  const original = console.error;
  console.error = (message: string) => errors.push(message);
  try {
    assert.equal((await app.request("/good/1")).status, 200);
    const leaky = await app.request("/leaky/1");
    assert.equal(leaky.status, 500);
    assert.match((await leaky.json()).error.message, /secretHash/);
    assert.match(errors.join("\n"), /GET \/leaky\/:id 200/);
  } finally {
    console.error = original;
  }
});
