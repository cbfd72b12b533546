/**
 * axe-core in a page under test: WCAG 2.2 A and AA, every rule of those
 * levels, over the page as it is now. axe's source goes in through the
 * DevTools protocol (puppeteer's evaluate), which the pages' strict CSP does
 * not govern, so nothing is loaded from anywhere and the page's own policy
 * stays as served.
 *
 * ```ts
 * await assertAccessible(page, "connect: key refused, phone");
 * ```
 */
import axe from "axe-core";
import type { Page } from "puppeteer-core";
import { emulate, screenshot, viewportOf } from "./browser.ts";

const WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Throws listing each violation (rule, impact, the elements) when axe finds any. */
export async function assertAccessible(page: Page, label: string): Promise<void> {
  // Once per document: a string evaluated whole, as the DevTools console would (no eval in the page's realm).
  if (!await page.evaluate(() => "axe" in globalThis)) await page.evaluate(axe.source);
  const violations = await page.evaluate(async (tags: string[]) => {
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run(context: unknown, options: unknown): Promise<unknown> };
    };
    const result = await page.axe.run(page.document, {
      runOnly: { type: "tag", values: tags },
      resultTypes: ["violations"],
    });
    return (result as { violations: unknown[] }).violations;
  }, WCAG_22_AA) as Violation[];
  if (violations.length === 0) return;
  const lines = violations.map((violation) =>
    `- ${violation.id} (${violation.impact}): ${violation.help}\n` +
    violation.nodes.map((node) => `    ${node.target.join(" ")}: ${node.failureSummary ?? ""}`).join("\n")
  );
  throw new Error(`axe-core found ${violations.length} WCAG 2.2 AA violation(s) on ${label}:\n${lines.join("\n")}`);
}

/** A page state as a reviewer sees it: a screenshot and an axe run at desktop and at phone size (no reload). */
export async function checkState(page: Page, group: string, name: string): Promise<string[]> {
  const before = viewportOf(page);
  const paths = [];
  for (const viewport of ["desktop", "phone"] as const) {
    await emulate(page, viewport);
    paths.push(await screenshot(page, group, name, viewport));
    await assertAccessible(page, `${group}/${name} (${viewport})`);
  }
  if (before !== "phone") await emulate(page, before);
  return paths;
}
