/**
 * Headless Chromium for the hosted-page tests, driven by puppeteer-core over
 * the DevTools protocol. The browser is Debian's `chromium` package: when it is
 * missing, the first test that needs it installs it (one apt run, however many
 * test files start at once). Screenshots land in `tests/.screenshots/`
 * (git-ignored) so a reviewer can look at every page state.
 *
 * ```ts
 * await using browser = await openBrowser();
 * const { page, record } = await browser.newPage("phone");
 * await page.goto(url, { waitUntil: "networkidle0" });
 * await screenshots(page, "connect", "start"); // start-desktop.png and start-phone.png
 * assertCleanPage(record);
 * assertNotInUrls(record, token);
 * ```
 */
import puppeteer, { type Browser, type CDPSession, type Page } from "puppeteer-core";

export type ViewportName = "desktop" | "phone";

/**
 * What `newPage`, `emulate` and `screenshots` emulate: the phone is a 390×844
 * touch screen at 3× (an iPhone 12–15), the desktop a 1280×800 mouse screen.
 */
export const DEVICES: Record<ViewportName, { width: number; height: number; scale: number; mobile: boolean }> = {
  desktop: { width: 1280, height: 800, scale: 1, mobile: false },
  phone: { width: 390, height: 844, scale: 3, mobile: true },
};

/**
 * Width-only viewports for puppeteer's own `page.setViewport` (the phone has no
 * touch and no mobile meta-viewport handling: puppeteer reloads a page whose
 * isMobile or hasTouch changes, which would lose the state a test wants at both
 * widths). Prefer `emulate`/`screenshots`, which switch without a reload. Once
 * a test calls `page.setViewport`, puppeteer's override wins over `emulate` for
 * that page.
 */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
  phone: { width: 390, height: 844, deviceScaleFactor: 2, isMobile: false, hasTouch: false },
} as const;

const SCREENSHOTS = new URL("../.screenshots/", import.meta.url).pathname;
const INSTALL_LOCK = `${Deno.env.get("TMPDIR") ?? "/tmp"}/service-tests-chromium-install-${Deno.uid() ?? 0}.lock`;
/** Without its recommendations (printer tools, avahi, perl); the fonts are the one we want, so pages read the same everywhere. */
const PACKAGES = ["chromium", "fonts-liberation"];

// ------------------------------------------------------------------ the browser binary

let located: Promise<string> | undefined;

/**
 * The Chromium binary: `CHROMIUM_PATH`, else `chromium` or `chromium-browser`
 * on PATH, else /usr/bin/chromium; else Debian's package, installed now with
 * apt-get (as root, or through passwordless `sudo -n`). Parallel test processes
 * take an exclusive lock, so apt runs once and the others wait for it.
 */
export function ensureChromium(): Promise<string> {
  // One answer per test process, failure included: a failed apt run is not retried by every test.
  located ??= locateOrInstall();
  return located;
}

async function locateOrInstall(): Promise<string> {
  const found = await findChromium();
  if (found) return found;
  return await withInstallLock(async () => {
    // Another test process may have installed it while this one waited for the lock.
    const meanwhile = await findChromium();
    if (meanwhile) return meanwhile;
    await installChromium();
    const installed = await findChromium();
    if (!installed) throw new Error(`apt-get installed ${PACKAGES.join(" ")} but no chromium binary was found`);
    return installed;
  });
}

async function findChromium(): Promise<string | null> {
  const configured = Deno.env.get("CHROMIUM_PATH");
  if (configured) {
    if (await isExecutable(configured)) return configured;
    throw new Error(`CHROMIUM_PATH is "${configured}", which is not an executable file`);
  }
  const dirs = (Deno.env.get("PATH") ?? "").split(":").filter(Boolean);
  for (const name of ["chromium", "chromium-browser"]) {
    for (const dir of dirs) {
      if (await isExecutable(`${dir}/${name}`)) return `${dir}/${name}`;
    }
  }
  return await isExecutable("/usr/bin/chromium") ? "/usr/bin/chromium" : null;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** apt-get install; `apt-get update` only when the install fails (no package lists yet, or stale ones). */
async function installChromium(): Promise<void> {
  const started = Date.now();
  console.error(`Chromium is missing: installing Debian's ${PACKAGES.join(" ")} with apt-get (once)…`);
  const install = ["install", "-y", "-q", "--no-install-recommends", ...PACKAGES];
  let result = await apt(install);
  if (!result.ok) {
    const update = await apt(["update", "-q"]);
    result = update.ok ? await apt(install) : { ok: false, log: `${result.log}\n${update.log}` };
  }
  if (!result.ok) {
    throw new Error(
      `Chromium is missing and could not be installed (apt-get install ${PACKAGES.join(" ")}, as root or ` +
        `through passwordless sudo). Install Debian's chromium package, or set CHROMIUM_PATH to a Chromium ` +
        `binary. apt said:\n${result.log}`,
    );
  }
  console.error(`Chromium installed in ${Math.round((Date.now() - started) / 1000)} s.`);
}

async function apt(args: string[]): Promise<{ ok: boolean; log: string }> {
  const root = Deno.uid() === 0;
  // A fresh machine may be running its own apt (unattended upgrades): wait for the dpkg lock, don't fail.
  const aptArgs = ["-o", "DPkg::Lock::Timeout=300", ...args];
  // sudo resets the environment, so the non-interactive frontend goes through `env`.
  const command = root ? "apt-get" : "sudo";
  const commandArgs = root ? aptArgs : ["-n", "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", ...aptArgs];
  try {
    const output = await new Deno.Command(command, {
      args: commandArgs,
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    return { ok: output.success, log: text.trim().split("\n").slice(-15).join("\n") };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { ok: false, log: `"${command}" is not on this machine` };
    throw error;
  }
}

/**
 * An exclusive lock (flock) on a file in the temp dir, so parallel test
 * processes run apt one at a time. The kernel drops it when its holder exits,
 * so a killed run leaves no stale lock behind.
 */
async function withInstallLock<T>(work: () => Promise<T>): Promise<T> {
  const file = await Deno.open(INSTALL_LOCK, { read: true, write: true, create: true });
  try {
    await file.lock(true);
    return await work();
  } finally {
    file.close();
  }
}

// ------------------------------------------------------------------ browser and pages

/** What a page did, for tests to assert on. Collected from `newPage` on, across navigations. */
export interface PageRecord {
  /** Every request URL the page made, in order, as puppeteer reports it (with a `#fragment` if the URL had one). */
  requests: string[];
  /** Console errors and uncaught exceptions. */
  errors: string[];
  /** Requests that got no answer: `<url>: <net::ERR_…>`. */
  failedRequests: string[];
  /** Answers with a status ≥ 400: `<status> <method> <url>`. */
  errorResponses: string[];
}

export interface TestPage {
  page: Page;
  record: PageRecord;
}

export interface TestBrowser extends AsyncDisposable {
  /** A new tab, emulating `viewport` (default desktop), recording what it does. */
  newPage(viewport?: ViewportName | { viewport?: ViewportName }): Promise<TestPage>;
  browser: Browser;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<TestBrowser> {
  const executablePath = await ensureChromium();
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    // Pages get their viewport from `emulate`: a puppeteer default viewport would take precedence over it.
    defaultViewport: null,
    args: [
      // The sandbox needs user namespaces or a setuid helper, which containers often lack; the pages are our own.
      "--no-sandbox",
      "--disable-gpu",
      // Puppeteer already turns off background networking; these are the rest of Chromium's calls home, which a
      // closed network refuses (slowly, and many at a time).
      "--disable-component-update",
      "--disable-domain-reliability",
      "--disable-quic",
      "--no-pings",
    ],
  }).catch((error) => {
    throw new Error(`Chromium (${executablePath}) did not start: ${error.message}`, { cause: error });
  });
  const close = async () => {
    if (browser.connected) await browser.close();
  };
  return {
    browser,
    async newPage(viewport = "desktop") {
      const name = typeof viewport === "string" ? viewport : viewport.viewport ?? "desktop";
      const page = await browser.newPage();
      const record = recordPage(page);
      await emulate(page, name);
      return { page, record };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The browser fetches `/favicon.ico` by itself when a page names no icon; its
 * 404 is the browser's doing, not the page's, so it is left out.
 */
const FAVICON = /^[^?#]*\/favicon\.ico$/;

function recordPage(page: Page): PageRecord {
  const record: PageRecord = { requests: [], errors: [], failedRequests: [], errorResponses: [] };
  page.on("request", (request) => record.requests.push(request.url()));
  page.on("requestfailed", (request) => {
    record.failedRequests.push(`${request.url()}: ${request.failure()?.errorText ?? "failed"}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400 && !FAVICON.test(response.url())) {
      record.errorResponses.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    }
  });
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const where = message.location().url;
    if (where && FAVICON.test(where)) return;
    record.errors.push(where ? `${message.text()} (${where})` : message.text());
  });
  page.on("pageerror", (error) => record.errors.push(String(error)));
  return record;
}

/** Fails listing every console error, uncaught exception, failed request and error answer, but the allowed ones. */
export function assertCleanPage(record: PageRecord, allow: (string | RegExp)[] = []): void {
  const allowed = (line: string) => allow.some((a) => typeof a === "string" ? line.includes(a) : a.test(line));
  const problems = [
    ...record.errors.map((line) => `console: ${line}`),
    ...record.failedRequests.map((line) => `request failed: ${line}`),
    ...record.errorResponses.map((line) => `answer: ${line}`),
  ].filter((line) => !allowed(line));
  if (problems.length > 0) throw new Error(`The page had problems:\n  ${problems.join("\n  ")}`);
}

/**
 * Fails when `secret` (or its URL-encoded form) is in any URL the page requested.
 * A fragment never goes over the wire, so it is left out.
 */
export function assertNotInUrls(record: PageRecord, secret: string, label = "the secret"): void {
  const forms = [secret, encodeURIComponent(secret)];
  for (const url of record.requests) {
    const sent = url.split("#")[0];
    if (forms.some((form) => sent.includes(form))) throw new Error(`${label} reached a request URL: ${sent}`);
  }
}

// ------------------------------------------------------------------ viewports and screenshots

const emulation = new WeakMap<Page, { session: CDPSession; viewport: ViewportName }>();

/**
 * Switches the page to a viewport without reloading it (a state reached by
 * clicks, or a token used once, survives): size, device scale, mobile
 * meta-viewport handling and touch, through a DevTools session of its own.
 * (Chromium applies a session's device scale only to the screenshots that
 * session takes: `screenshot` takes them there.)
 */
export async function emulate(page: Page, viewport: ViewportName): Promise<void> {
  // A viewport set with puppeteer's page.setViewport takes precedence over this session's: drop it.
  if (page.viewport()) await page.setViewport(null);
  let state = emulation.get(page);
  if (!state) {
    state = { session: await page.createCDPSession(), viewport };
    emulation.set(page, state);
  }
  const device = DEVICES[viewport];
  await state.session.send("Emulation.setDeviceMetricsOverride", {
    width: device.width,
    height: device.height,
    deviceScaleFactor: device.scale,
    mobile: device.mobile,
    screenWidth: device.width,
    screenHeight: device.height,
    screenOrientation: { angle: 0, type: "portraitPrimary" },
  });
  await state.session.send(
    "Emulation.setTouchEmulationEnabled",
    device.mobile ? { enabled: true, maxTouchPoints: 5 } : { enabled: false },
  );
  state.viewport = viewport;
  // Let the page lay itself out at the new size before anyone looks (a hidden tab never paints: hence the time limit).
  await page.evaluate(() =>
    new Promise((resolve) => {
      const frame = (globalThis as unknown as { requestAnimationFrame(callback: () => void): void })
        .requestAnimationFrame;
      frame(() => frame(() => resolve(null)));
      setTimeout(resolve, 200);
    })
  );
}

/** The viewport `emulate` last set on the page. */
export function viewportOf(page: Page): ViewportName {
  return emulation.get(page)?.viewport ?? "desktop";
}

export interface ScreenshotOptions {
  /** The whole scrollable page (default), or only what the viewport shows. */
  fullPage?: boolean;
}

/**
 * A PNG of the page as it is, at `tests/.screenshots/<group>/<name>-<viewport>.png`;
 * `viewport` only names the file (default: the one `emulate` last set). Answers the path.
 */
export async function screenshot(
  page: Page,
  group: string,
  name: string,
  viewport: ViewportName = viewportOf(page),
  options: ScreenshotOptions = {},
): Promise<string> {
  const dir = `${SCREENSHOTS}${group}`;
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/${name}-${viewport}.png` as const;
  const fullPage = options.fullPage ?? true;
  const state = emulation.get(page);
  if (state && !page.viewport()) {
    const { data } = await state.session.send("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: fullPage,
    });
    await Deno.writeFile(path, Uint8Array.from(atob(data), (char) => char.charCodeAt(0)));
  } else {
    // The test set the viewport with puppeteer's page.setViewport: puppeteer's session has the device scale.
    await page.screenshot({ path, fullPage });
  }
  return path;
}

/** The page's state at desktop and at phone size, then back to the viewport it had. Answers both paths. */
export async function screenshots(
  page: Page,
  group: string,
  name: string,
  options: ScreenshotOptions = {},
): Promise<string[]> {
  const before = viewportOf(page);
  const paths = [];
  for (const viewport of ["desktop", "phone"] as const) {
    await emulate(page, viewport);
    paths.push(await screenshot(page, group, name, viewport, options));
  }
  if (before !== "phone") await emulate(page, before);
  return paths;
}
