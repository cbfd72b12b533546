/**
 * Compact, URL-safe tokens the service hands out and must read back unchanged
 * (list cursors): AES-256-GCM with the caller's binding (e.g. the partner a
 * cursor was issued to) as associated data, so a token is tamper-evident and
 * opens only where it was issued.
 *
 * Form: base64url(iv ‖ ciphertext+tag), no padding. The AES key is derived
 * from each master key by HKDF, never the master key itself: a token cannot be
 * opened as a stored secret, nor a stored secret as a token.
 *
 * A token carries no key id: opening tries the current key, then each previous
 * one. GCM's tag makes a wrong key fail cleanly, the list is one or two keys
 * long, and the token stays short (~66 characters for a list cursor).
 */
const HKDF_SALT = new TextEncoder().encode("opaque-token salt v1");
const HKDF_INFO = new TextEncoder().encode("opaque-token v1");
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface TokenSealer {
  /** Seals with the current master key. */
  seal(payload: string, binding: string): Promise<string>;
  /** The payload, or null for anything that does not open under `binding` with a configured key (never throws). */
  open(token: string, binding: string): Promise<string | null>;
}

/** `masterKeys` holds the current key first, then the previous ones. */
export async function createTokenSealer(masterKeys: Uint8Array<ArrayBuffer>[]): Promise<TokenSealer> {
  const [current, ...previous] = await Promise.all(masterKeys.map(deriveTokenKey));
  return {
    async seal(payload, binding) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const cipher = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(binding) },
        current,
        new TextEncoder().encode(payload),
      );
      return toBase64Url(concat(iv, new Uint8Array(cipher)));
    },
    async open(token, binding) {
      const bytes = fromBase64Url(token);
      if (!bytes || bytes.length < IV_BYTES + TAG_BYTES) return null;
      const params = {
        name: "AES-GCM",
        iv: bytes.subarray(0, IV_BYTES),
        additionalData: new TextEncoder().encode(binding),
      };
      for (const key of [current, ...previous]) {
        try {
          return new TextDecoder().decode(await crypto.subtle.decrypt(params, key, bytes.subarray(IV_BYTES)));
        } catch {
          // Not this key, another binding, or tampered: GCM cannot tell them apart, so try the next key.
        }
      }
      return null;
    },
  };
}

async function deriveTokenKey(masterKey: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", masterKey, "HKDF", false, ["deriveKey"]);
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: HKDF_INFO },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  // atob alone would accept "+", "/", "=" and whitespace: only the alphabet we emit is a token.
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}
