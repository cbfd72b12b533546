/**
 * What every hosted page shares, over real HTTP and in headless Chromium:
 * the per-IP limit counts page loads and API calls but never the pages' own
 * files; a refused page load is a styled pt-BR page (not JSON) that takes the
 * token out of the address bar first, counts the wait down and opens the same
 * link again by itself; the files are linked under content-hashed names that
 * may be cached for good.
 */
import assert from "node:assert/strict";
import { assertCleanPage, assertNotInUrls, openBrowser } from "../_helpers/browser.ts";
import { checkState } from "../_helpers/axe.ts";
import { START } from "../_helpers/env.ts";
import { expectError } from "../_helpers/http.ts";
import { heading, newTab } from "../_helpers/page_tab.ts";
import { openLink } from "../connect/connect_fixture.ts";
import { withService } from "../connect/browser_fixture.ts";
import { PAGE_REQUESTS_PER_MINUTE } from "../../hosted-pages/security.ts";

const MINUTE = 60_000;

Deno.test("hosted pages: assets outside the per-IP limit, a styled limited page that reopens the link", async (t) => {
  await using browser = await openBrowser();
  await withService(async ({ env, origin, partner }) => {
    const { token } = await openLink(env, partner);
    const assetLinks = async () => {
      const html = await (await fetch(`${origin}/connect`)).text();
      return [...html.matchAll(/(?:href|src)="(\/connect\/assets\/[^"]+)"/g)].map((match) => match[1]);
    };
    /** Spend this minute's page requests (the window is the test clock's minute), `secondsLeft` before it ends. */
    const exhaust = async (minute: number, secondsLeft: number) => {
      env.clock.freeze(START + minute * MINUTE + MINUTE - secondsLeft * 1000);
      for (let i = 0; i < PAGE_REQUESTS_PER_MINUTE; i++) {
        const response = await fetch(`${origin}/connect/api/session`, { method: "GET" });
        await response.body?.cancel();
        assert.notEqual(response.status, 429, `request ${i + 1} of the minute`);
      }
    };

    await t.step("files are linked by content hash, cached for good; their plain names are revalidated", async () => {
      const links = await assetLinks();
      assert.ok(links.some((link) => /\/connect\.[0-9a-f]{12}\.css$/.test(link)), links.join(" "));
      assert.ok(links.some((link) => /\/page_kit\.[0-9a-f]{12}\.js$/.test(link)), links.join(" "));
      for (const link of links) {
        const response = await fetch(`${origin}${link}`);
        await response.body?.cancel();
        assert.equal(response.status, 200, link);
        assert.equal(response.headers.get("cache-control"), "public, max-age=31536000, immutable", link);
      }
      const stale = await fetch(`${origin}${links[0].replace(/\.[0-9a-f]{12}\./, ".000000000000.")}`);
      await stale.body?.cancel();
      assert.equal(stale.status, 404, "a hash that is not the content's");
      const plain = await fetch(`${origin}/connect/assets/connect.js`);
      await plain.body?.cancel();
      assert.equal(plain.headers.get("cache-control"), "no-cache");
    });

    await t.step("the page's files are not counted; a refused load is HTML, a refused call JSON", async () => {
      const links = await assetLinks();
      await exhaust(1, 30);
      for (let load = 0; load < 5; load++) {
        for (const link of links) {
          const response = await fetch(`${origin}${link}`);
          await response.body?.cancel();
          assert.equal(response.status, 200, `${link} after the minute's requests were spent`);
        }
      }
      const page = await fetch(`${origin}/connect`);
      const html = await page.text();
      assert.equal(page.status, 429);
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
      assert.equal(page.headers.get("retry-after"), "30");
      assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.equal(page.headers.get("cache-control"), "no-store");
      assert.match(html, /<html lang="pt-BR">/);
      assert.match(html, /Muitas tentativas em pouco tempo/);
      assert.match(html, /30 segundos/);
      await expectError(
        await fetch(`${origin}/connect/api/session`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token }),
        }),
        429,
        "TOO_MANY_REQUESTS",
      );
    });

    for (const [minute, viewport] of [[3, "desktop"], [5, "phone"]] as const) {
      await t.step(`${viewport}: the limited page hides the token, counts down and opens the link again`, async () => {
        await exhaust(minute, 12);
        const tab = await newTab(browser, viewport);
        await tab.page.goto(`${origin}/connect#t=${token}`, { waitUntil: "domcontentloaded" });
        await tab.page.waitForSelector(".countdown time");
        assert.equal(await heading(tab.page), "Muitas tentativas em pouco tempo");
        assert.ok(!tab.page.url().includes(token), `the address bar: ${tab.page.url()}`);
        const left = await tab.page.$eval(".countdown time", (time) => time.textContent);
        assert.match(left ?? "", /^0:(0\d|1[0-2])$/);
        if (viewport === "phone") await checkState(tab.page, "limits", "limited");
        // The next minute: the page reopens the same link when its countdown ends, and the link still works.
        env.clock.freeze(START + (minute + 1) * MINUTE);
        await tab.page.waitForFunction(
          `!document.querySelector("main")?.innerText.match(/Carregando|Muitas tentativas/)`,
          { timeout: 30_000, polling: 100 },
        );
        assert.match(await heading(tab.page), /Conecte sua conta/);
        assert.ok(!tab.page.url().includes(token), `the address bar after reopening: ${tab.page.url()}`);
        assertNotInUrls(tab.record, token, "the link token");
        assertCleanPage(tab.record, [/ 429 GET .*\/connect(#.*)?$/, /status of 429/]);
        await tab.page.close();
      });
    }
  });
});
