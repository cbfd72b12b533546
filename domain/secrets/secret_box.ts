/**
 * AES-256-GCM encryption of secrets at rest (venue API secrets, agent keys,
 * webhook signing secrets).
 *
 * Sealed form: `v2.<keyId>.<base64 iv>.<base64 ciphertext+tag>`.
 * - The associated data is the secret's binding (its owning row and purpose),
 *   so a ciphertext copied into another row, or into another column of the
 *   same row, does not open there.
 * - The key id names the master key that sealed it. The box holds the current
 *   key and any previous ones (`MASTER_KEYS_PREVIOUS`): it always seals with the
 *   current key and opens with whichever key the prefix names, so a new master
 *   key can be deployed first and old rows re-sealed afterwards
 *   (`deno task operator rotate-master-key`) without downtime.
 */
import { Buffer } from "node:buffer";
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { SealedSecret, SecretOpener } from "../../venues/types.ts";
import { createTokenSealer } from "./opaque_token.ts";

const VERSION = "v2";
const TAG_BYTES = 16;

export interface SecretBox extends SecretOpener {
  seal(plain: string, binding: string): Promise<SealedSecret>;
  /** True when `sealed` was made with a key other than the current one (a rotation re-seals it). */
  isStale(sealed: string): boolean;
  /** A short URL-safe token handed to callers (a list cursor), bound like a sealed secret, under a derived key. */
  sealToken(payload: string, binding: string): Promise<string>;
  /** The token's payload, or null when it does not open under `binding` with a configured key (never throws). */
  openToken(token: string, binding: string): Promise<string | null>;
}

/**
 * The binding of a secret: the one place it may live. Built from the owning
 * row, never from anything the caller of an API controls.
 */
export function secretBinding(table: string, rowId: string, purpose: string): string {
  return `${table}/${rowId}/${purpose}`;
}

export function createSecretBox(currentKeyBase64: string, previousKeysBase64: string[] = []): Promise<SecretBox> {
  const current = importMasterKey(currentKeyBase64);
  const keys = new Map([current, ...previousKeysBase64.map(importMasterKey)].map((k) => [k.id, k]));
  const tokens = createTokenSealer([currentKeyBase64, ...previousKeysBase64].map(base64ToBytes));
  return Promise.resolve({
    sealToken: tokens.seal,
    openToken: tokens.open,
    // node:crypto, synchronously: WebCrypto's round trip to a worker thread cost ~40 µs an opening, and a fan-out
    // opens an account's key for every request it signs. Same algorithm and bytes (ciphertext then 16-byte tag).
    seal: (plain, binding) =>
      settled(() => {
        const iv = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", current.key, iv);
        cipher.setAAD(associatedData(binding));
        const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
        return { sealed: [VERSION, current.id, bytesToBase64(iv), bytesToBase64(sealed)].join("."), binding };
      }),
    open: ({ sealed, binding }) =>
      settled(() => {
        const { keyId, iv, cipher } = parseSealed(sealed);
        const master = keys.get(keyId);
        if (!master) throw new Error("Sealed secret names a master key this service does not hold");
        const decipher = createDecipheriv("aes-256-gcm", master.key, iv);
        decipher.setAAD(associatedData(binding));
        decipher.setAuthTag(cipher.subarray(cipher.length - TAG_BYTES));
        return Buffer.concat([decipher.update(cipher.subarray(0, cipher.length - TAG_BYTES)), decipher.final()])
          .toString("utf8");
      }),
    isStale(sealed) {
      return parseSealed(sealed).keyId !== current.id;
    },
  });
}

/** `work`'s result, or its failure as a rejection: callers of an opener handle failures as rejections. */
function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}

interface MasterKey {
  id: string;
  key: Uint8Array;
}

function importMasterKey(base64: string): MasterKey {
  const raw = base64ToBytes(base64);
  if (raw.length !== 32) throw new RangeError("A master key must decode to exactly 32 bytes");
  // The id is a public fingerprint of the key: a labelled hash, so it reveals nothing usable about the key.
  const label = new TextEncoder().encode("secret-box key id\0");
  const digest = createHash("sha256").update(label).update(raw).digest();
  const id = bytesToBase64(digest.subarray(0, 9)).replaceAll("+", "-").replaceAll("/", "_");
  return { id, key: raw };
}

function parseSealed(sealed: string): { keyId: string; iv: Uint8Array<ArrayBuffer>; cipher: Uint8Array<ArrayBuffer> } {
  const [version, keyId, iv, cipher, ...rest] = sealed.split(".");
  if (version !== VERSION || !keyId || !iv || !cipher || rest.length) {
    throw new Error("Sealed secret has an unknown format");
  }
  return { keyId, iv: base64ToBytes(iv), cipher: base64ToBytes(cipher) };
}

function associatedData(binding: string): Uint8Array<ArrayBuffer> {
  if (!binding) throw new Error("A sealed secret needs a binding");
  return new TextEncoder().encode(`${VERSION}\0${binding}`);
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
