/**
 * Public identifiers: a prefix, then a time-ordered, random, URL-safe body
 * (Crockford base32: 10 characters of milliseconds, 16 of randomness).
 *
 * Ids made in the same millisecond by this process increase: the random part
 * of the previous one plus a random step (up to 2^30), as ULIDs do. Rows
 * keyed by them then go in at the end of their indexes instead of at random
 * places in them: a period close makes thousands of ids a millisecond, and
 * random keys made each commit write many more pages.
 */
import { createHash } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const RANDOM_DIGITS = 16;

let lastAt = Number.NaN;
let lastTime = "";
/** The random part of the last id, as base32 digit values. */
const lastRandom = new Uint8Array(RANDOM_DIGITS);

export function newId(prefix: string, at: number): string {
  if (at !== lastAt || !stepForward(lastRandom)) {
    if (at !== lastAt) lastTime = timePart(at);
    lastAt = at;
    crypto.getRandomValues(lastRandom);
    for (let i = 0; i < RANDOM_DIGITS; i++) lastRandom[i] &= 31;
  }
  let random = "";
  for (const digit of lastRandom) random += ALPHABET[digit];
  return `${prefix}_${lastTime}${random}`;
}

function timePart(at: number): string {
  let time = "";
  let rest = at;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return time;
}

/** Adds a random step of 1 to 2^30 to `digits`; false when that overflows 80 bits (then a fresh random part). */
function stepForward(digits: Uint8Array): boolean {
  let carry = 1 + (crypto.getRandomValues(new Uint32Array(1))[0] >>> 2);
  for (let i = digits.length - 1; i >= 0 && carry > 0; i--) {
    const sum = digits[i] + carry;
    digits[i] = sum % 32;
    carry = Math.floor(sum / 32);
  }
  return carry === 0;
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
