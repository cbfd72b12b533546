/**
 * Shared setup of the VENUE_B WebSocket tests: a raw WebSocket client that
 * keeps every frame and waits for the one a test expects, and the recording
 * watcher the adapter tests hand to `watchAccount`.
 */
import type { AccountPush, AccountWatcher, PushCoverage } from "../../venues/types.ts";
import type { SimHandle } from "./venue_b_fixture.ts";

/** How long a test waits for a frame or a report before it fails. */
export const WAIT_MS = 5_000;

/** The simulator's WebSocket URL. */
export function wsUrl(sim: SimHandle): string {
  return `${sim.baseUrl.replace(/^http/, "ws")}/ws`;
}

/** Waits for `ready()` to hold, checking whenever `onChange` is called; fails after WAIT_MS naming `what`. */
class Waiters {
  readonly #waiting = new Set<() => void>();

  changed(): void {
    for (const check of [...this.#waiting]) check();
  }

  until<T>(find: () => T | undefined, what: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        this.#waiting.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.#waiting.delete(check);
        reject(new Error(`Waited ${WAIT_MS} ms for ${what()}`));
      }, WAIT_MS);
      this.#waiting.add(check);
      check();
    });
  }
}

/** A raw client of the simulator's WebSocket; frames it has not taken yet wait in `frames`. */
export class WsProbe implements AsyncDisposable {
  readonly socket: WebSocket;
  /** JSON frames received and not yet taken, oldest first. */
  readonly frames: Record<string, unknown>[] = [];
  /** Text frames that were not JSON (the venue's greeting). */
  readonly texts: string[] = [];
  readonly closed: Promise<CloseEvent>;
  readonly #waiters = new Waiters();

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.onmessage = (event) => {
      try {
        this.frames.push(JSON.parse(event.data));
      } catch {
        this.texts.push(String(event.data));
      }
      this.#waiters.changed();
    };
    this.closed = new Promise((resolve) => socket.addEventListener("close", resolve, { once: true }));
  }

  /** Connects; rejects when the upgrade is refused. */
  static open(url: string): Promise<WsProbe> {
    const socket = new WebSocket(url);
    return new Promise((resolve, reject) => {
      socket.onopen = () => resolve(new WsProbe(socket));
      socket.onerror = () => reject(new Error(`WebSocket to ${url} refused`));
    });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** Takes the first frame (oldest first) that `matches`, waiting for it when none has come yet. */
  take(
    matches: (frame: Record<string, unknown>) => boolean,
    what = "a matching frame",
  ): Promise<Record<string, unknown>> {
    return this.#waiters.until(() => {
      const index = this.frames.findIndex(matches);
      return index < 0 ? undefined : this.frames.splice(index, 1)[0];
    }, () => `${what}; frames: ${JSON.stringify(this.frames)}`);
  }

  /** Takes the next frame of `channel`. */
  channel(channel: string): Promise<Record<string, unknown>> {
    return this.take((frame) => frame.channel === channel, `a "${channel}" frame`);
  }

  /** Subscribes and takes the ack. */
  async subscribe(subscription: Record<string, unknown>): Promise<void> {
    this.send({ method: "subscribe", subscription });
    await this.take(
      (frame) =>
        frame.channel === "subscriptionResponse" &&
        JSON.stringify((frame.data as { subscription: unknown }).subscription) === JSON.stringify(subscription),
      `the ack of ${JSON.stringify(subscription)}`,
    );
  }

  async close(): Promise<void> {
    if (this.socket.readyState !== WebSocket.CLOSED) this.socket.close();
    await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** One report a watcher received. */
export type Report =
  | { kind: "push"; push: AccountPush }
  | { kind: "live"; coverage: PushCoverage }
  | { kind: "lost"; reason: string };

/** An AccountWatcher that keeps every report, for tests to wait on. */
export class RecordingWatcher implements AccountWatcher {
  readonly reports: Report[] = [];
  readonly #waiters = new Waiters();

  onPush(push: AccountPush): void {
    this.#record({ kind: "push", push });
  }

  onLive(coverage: PushCoverage): void {
    this.#record({ kind: "live", coverage });
  }

  onLost(reason: string): void {
    this.#record({ kind: "lost", reason });
  }

  #record(report: Report): void {
    this.reports.push(report);
    this.#waiters.changed();
  }

  /** The pushes received so far. */
  get pushes(): AccountPush[] {
    return this.reports.flatMap((report) => report.kind === "push" ? [report.push] : []);
  }

  /** Waits for a report at or after `from` (an index into `reports`) that `matches`; answers it. */
  next(matches: (report: Report) => boolean, from = 0, what = "a matching report"): Promise<Report> {
    return this.#waiters.until(
      () => this.reports.slice(from).find(matches),
      () => `${what}; reports: ${JSON.stringify(this.reports)}`,
    );
  }

  /** Waits for a push at or after `from` that `matches`. */
  async push(matches: (push: AccountPush) => boolean, from = 0, what = "a matching push"): Promise<AccountPush> {
    const report = await this.next((report) => report.kind === "push" && matches(report.push), from, what);
    return (report as { push: AccountPush }).push;
  }

  /** Waits for the first `onLive` at or after `from`; answers its coverage. */
  async live(from = 0): Promise<PushCoverage> {
    const report = await this.next((report) => report.kind === "live", from, "onLive");
    return (report as { coverage: PushCoverage }).coverage;
  }

  /** Waits for the first `onLost` at or after `from`; answers its reason. */
  async lost(from = 0): Promise<string> {
    const report = await this.next((report) => report.kind === "lost", from, "onLost");
    return (report as { reason: string }).reason;
  }
}
