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
import type { SealedSecret, SecretOpener } from "../../venues/types.ts";
import { createTokenSealer } from "./opaque_token.ts";

const VERSION = "v2";

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

export async function createSecretBox(currentKeyBase64: string, previousKeysBase64: string[] = []): Promise<SecretBox> {
  const current = await importMasterKey(currentKeyBase64);
  const keys = new Map([current, ...await Promise.all(previousKeysBase64.map(importMasterKey))].map((k) => [k.id, k]));
  const tokens = createTokenSealer([currentKeyBase64, ...previousKeysBase64].map(base64ToBytes));
  return {
    sealToken: tokens.seal,
    openToken: tokens.open,
    async seal(plain, binding) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const cipher = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: associatedData(binding) },
        current.key,
        new TextEncoder().encode(plain),
      );
      return {
        sealed: [VERSION, current.id, bytesToBase64(iv), bytesToBase64(new Uint8Array(cipher))].join("."),
        binding,
      };
    },
    async open({ sealed, binding }) {
      const { keyId, iv, cipher } = parseSealed(sealed);
      const master = keys.get(keyId);
      if (!master) throw new Error("Sealed secret names a master key this service does not hold");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv, additionalData: associatedData(binding) },
        master.key,
        cipher,
      );
      return new TextDecoder().decode(plain);
    },
    isStale(sealed) {
      return parseSealed(sealed).keyId !== current.id;
    },
  };
}

interface MasterKey {
  id: string;
  key: CryptoKey;
}

async function importMasterKey(base64: string): Promise<MasterKey> {
  const raw = base64ToBytes(base64);
  if (raw.length !== 32) throw new RangeError("A master key must decode to exactly 32 bytes");
  // The id is a public fingerprint of the key: a labelled hash, so it reveals nothing usable about the key.
  const label = new TextEncoder().encode("secret-box key id\0");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", concat(label, raw)));
  const id = bytesToBase64(digest.subarray(0, 9)).replaceAll("+", "-").replaceAll("/", "_");
  return { id, key: await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]) };
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

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
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
