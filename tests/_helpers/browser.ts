/**
 * Headless Chromium for the hosted-page tests, driven by puppeteer-core over
 * the DevTools protocol. The browser is Debian's `chromium` package, installed
 * by the first test run that needs it when it is missing (one apt run, however
 * many test files start at once). Screenshots land in `tests/.screenshots/`
 * (git-ignored) so a reviewer can look at every page state.
 */
import puppeteer, { type Browser, type Page } from "puppeteer-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const LOCK = `${Deno.env.get("TMPDIR") ?? "/tmp"}/service-tests-chromium.lock`;
const SCREENSHOTS = new URL("../.screenshots/", import.meta.url).pathname;

/**
 * The page's layout depends on its width only. `isMobile` stays false: puppeteer
 * reloads a page whose isMobile or hasTouch changes, which would lose the
 * state a test wants to see at both widths.
 */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
  phone: { width: 390, height: 844, deviceScaleFactor: 2, isMobile: false, hasTouch: false },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** The Chromium binary: CHROMIUM_PATH, a known path, or Debian's package installed now. */
export async function ensureChromium(): Promise<string> {
  const found = await findChromium();
  if (found) return found;
  await withInstallLock(async () => {
    if (await findChromium()) return;
    const root = Deno.uid() === 0;
    const apt = (args: string[]) =>
      new Deno.Command(root ? "apt-get" : "sudo", {
        args: root ? args : ["-n", "apt-get", ...args],
        env: { DEBIAN_FRONTEND: "noninteractive" },
        stdout: "null",
        stderr: "piped",
      }).output();
    let result = await apt(["install", "-y", "-q", "chromium"]);
    if (!result.success) {
      await apt(["update", "-q"]);
      result = await apt(["install", "-y", "-q", "chromium"]);
    }
    if (!result.success) {
      throw new Error(
        `Chromium is missing and could not be installed (apt-get install chromium): ${
          new TextDecoder().decode(result.stderr).slice(-500)
        }. Install it, or set CHROMIUM_PATH.`,
      );
    }
  });
  const installed = await findChromium();
  if (!installed) throw new Error("Chromium was installed but not found; set CHROMIUM_PATH");
  return installed;
}

async function findChromium(): Promise<string | null> {
  const configured = Deno.env.get("CHROMIUM_PATH");
  for (const path of configured ? [configured] : CANDIDATES) {
    try {
      if ((await Deno.stat(path)).isFile) return path;
    } catch {
      // not there
    }
  }
  return null;
}

/** An exclusive lock file, so parallel test processes run apt one at a time. */
async function withInstallLock(work: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      const file = await Deno.open(LOCK, { createNew: true, write: true });
      file.close();
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      if (Date.now() > deadline) throw new Error(`Waited 10 minutes for ${LOCK}; remove it if stale`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    await work();
  } finally {
    await Deno.remove(LOCK).catch(() => {});
  }
}

/** What a page did that a test may assert on. */
export interface PageRecord {
  /** Every request URL the page made, in order. */
  requests: string[];
  /** Console errors and uncaught exceptions. */
  errors: string[];
}

export interface TestBrowser extends AsyncDisposable {
  newPage(viewport: ViewportName): Promise<{ page: Page; record: PageRecord }>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<TestBrowser> {
  const browser: Browser = await puppeteer.launch({
    executablePath: await ensureChromium(),
    headless: true,
    // The sandbox needs user namespaces, which containers often lack; the pages are our own.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const close = async () => await browser.close();
  return {
    async newPage(viewport) {
      const page = await browser.newPage();
      await page.setViewport(VIEWPORTS[viewport]);
      const record: PageRecord = { requests: [], errors: [] };
      page.on("request", (request) => record.requests.push(request.url()));
      page.on("console", (message) => {
        if (message.type() === "error") record.errors.push(message.text());
      });
      page.on("pageerror", (error) => record.errors.push(String(error)));
      return { page, record };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A full-page PNG at `tests/.screenshots/<group>/<name>-<viewport>.png`. */
export async function screenshot(page: Page, group: string, name: string, viewport: ViewportName): Promise<void> {
  const dir = `${SCREENSHOTS}${group}`;
  await Deno.mkdir(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${name}-${viewport}.png` as `${string}.png`, fullPage: true });
}
