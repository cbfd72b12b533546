/**
 * The headers of every hosted-page answer, over real HTTP: the pages, their
 * assets and their APIs (answers and refusals alike) deny every powerful
 * browser feature but writing to the clipboard from the page itself (its copy
 * buttons) and ask search engines to neither index them nor follow their links.
 */
import assert from "node:assert/strict";
import { startServedTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { openLink } from "./connect_fixture.ts";

/** Features a page could ask the browser for; the hosted pages use none of them. */
const DENIED = ["camera", "microphone", "geolocation", "payment", "usb", "clipboard-read"];
/** What the pages do use, for themselves only. */
const SELF_ONLY = new Map([["clipboard-write", "(self)"]]);

Deno.test("every hosted-page answer carries Permissions-Policy (only clipboard-write, for self) and X-Robots-Tag: noindex, nofollow", async () => {
  const served = await startServedTestEnv();
  const { env, origin } = served;
  try {
    const partner = await createPartner(env);
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "ana" },
        headers: { "idempotency-key": "ana-0001" },
      }),
      201,
    );
    const { token } = await openLink(env, partner);
    const post = (path: string, body: unknown) =>
      fetch(`${origin}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    const answers: [label: string, status: number, response: Response][] = [
      ["connect page", 200, await fetch(`${origin}/connect`)],
      ["connect script", 200, await fetch(`${origin}/connect/assets/connect.js`)],
      ["connect stylesheet", 200, await fetch(`${origin}/connect/assets/connect.css`)],
      ["connect API answer", 200, await post("/connect/api/session", { token })],
      ["connect API refusal", 404, await post("/connect/api/session", { token: "C".repeat(43) })],
      ["connect unknown path", 404, await fetch(`${origin}/connect/nothing-here`)],
      ["pay page", 200, await fetch(`${origin}/pay`)],
      ["pay script", 200, await fetch(`${origin}/pay/assets/pay.js`)],
      ["pay API refusal", 400, await post("/pay/api/session", { token: "short" })],
    ];
    for (const [label, status, response] of answers) {
      const text = await response.text();
      assert.equal(response.status, status, `${label}: ${text}`);
      if (label === "connect API answer") env.watchedSecrets.add("page ticket", JSON.parse(text).ticket);

      const policy = response.headers.get("permissions-policy") ?? "";
      const directives = new Map(policy.split(",").map((d) => d.trim().split("=") as [string, string]));
      for (const feature of DENIED) assert.equal(directives.get(feature), "()", `${label}: ${feature} in "${policy}"`);
      for (const [feature, allowlist] of directives) {
        assert.equal(allowlist, SELF_ONLY.get(feature) ?? "()", `${label}: ${feature} in "${policy}"`);
      }
      for (const [feature, allowlist] of SELF_ONLY) assert.equal(directives.get(feature), allowlist, label);
      assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow", label);
      // The headers the pages already had stay.
      assert.match(response.headers.get("content-security-policy") ?? "", /default-src 'none'/, label);
      assert.equal(response.headers.get("referrer-policy"), "no-referrer", label);
    }
  } finally {
    await served.close();
  }
});
