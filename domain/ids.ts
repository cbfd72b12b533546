/**
 * Public identifiers: a prefix, then a time-ordered, random, URL-safe body
 * (Crockford base32: 10 characters of milliseconds, 16 of randomness).
 */
import { createHash } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export function newId(prefix: string, at: number): string {
  let time = "";
  let rest = at;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return `${prefix}_${time}${randomToken(16)}`;
}

/** `length` random characters of the base32 alphabet (5 bits each). */
export function randomToken(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/** 32 random bytes as base64url: secrets, tokens. */
export function randomSecret(bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let binary = "";
  for (const byte of raw) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * SHA-256 of the text's UTF-8 as lowercase hex, synchronously: WebCrypto's
 * async hop costs more than the hash, and node:crypto's native hash about
 * half of noble's (an entry of a fan-out hashes five times).
 */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * String comparison whose time depends only on the longer length, not on
 * where the strings differ. Works on UTF-16 code units, so it allocates
 * nothing (past the end, `charCodeAt` is NaN, which `^` reads as 0).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0, n = Math.max(a.length, b.length); i < n; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
