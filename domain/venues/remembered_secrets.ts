/**
 * A secret opener that remembers what it opened, for the venue adapters: a
 * fan-out signs several requests per account, and opening the same sealed
 * secret each time (AES-GCM through WebCrypto, with its base64 and promise
 * round trip) cost ~50 µs a request, about a sixth of an entry's CPU.
 *
 * Keyed by the sealed value and its binding, so it never decides which secret
 * an account uses: the caller still reads the account's row on every call,
 * and a reconnected account's new sealed value is a new key (a master key
 * rotation re-seals, so the same). A failed opening is not kept. The oldest
 * entry goes when it is full: a plaintext stays no longer than the process
 * keeps using it, and never reaches a log, an error or a trace.
 */
import type { SealedSecret, SecretOpener } from "../../venues/types.ts";

/** Secrets kept per adapter: the accounts of a large fan-out, at a few hundred bytes each. */
const REMEMBERED_SECRETS = 20_000;

export function rememberingOpener(opener: SecretOpener, capacity = REMEMBERED_SECRETS): SecretOpener {
  const opened = new Map<string, Promise<string>>();
  return {
    open(secret: SealedSecret): Promise<string> {
      const key = `${secret.binding}\u0000${secret.sealed}`;
      const known = opened.get(key);
      if (known) return known;
      const opening = opener.open(secret);
      opening.catch(() => opened.delete(key));
      if (opened.size >= capacity) opened.delete(opened.keys().next().value!);
      opened.set(key, opening);
      return opening;
    },
  };
}
