/**
 * Compact, URL-safe tokens the service hands out and must read back unchanged
 * (list cursors): AES-256-GCM, associated data = the caller's binding (e.g.
 * the partner the cursor was issued to), with a key derived from each master
 * key by HKDF, so a token never opens as a stored secret or the reverse.
 *
 * Form: base64url(keyId ‖ iv ‖ ciphertext+tag). The 4-byte key id (a
 * labelled hash of the master key) names the key that sealed it, so a token
 * issued before a rotation keeps working while the old key is configured.
 */
const HKDF_SALT = new TextEncoder().encode("opaque-token salt v1");
const HKDF_INFO = new TextEncoder().encode("opaque-token v1");
const KEY_ID_LABEL = new TextEncoder().encode("opaque-token key id\0");
const KEY_ID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface TokenKey {
  id: string;
  key: CryptoKey;
}

export interface TokenSealer {
  seal(payload: string, binding: string): Promise<string>;
  /** The payload, or null for anything that does not open under `binding` (never throws). */
  open(token: string, binding: string): Promise<string | null>;
}

export async function createTokenSealer(masterKeys: Uint8Array<ArrayBuffer>[]): Promise<TokenSealer> {
  const keys = await Promise.all(masterKeys.map(deriveKey));
  const byId = new Map(keys.map((entry) => [entry.id, entry.key]));
  return {
    async seal(payload, binding) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const cipher = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(binding) },
          keys[0].key,
          new TextEncoder().encode(payload),
        ),
      );
      const bytes = new Uint8Array(KEY_ID_BYTES + IV_BYTES + cipher.length);
      bytes.set(fromHex(keys[0].id));
      bytes.set(iv, KEY_ID_BYTES);
      bytes.set(cipher, KEY_ID_BYTES + IV_BYTES);
      return toBase64Url(bytes);
    },
    async open(token, binding) {
      const bytes = fromBase64Url(token);
      if (!bytes || bytes.length < KEY_ID_BYTES + IV_BYTES + TAG_BYTES) return null;
      const key = byId.get(toHex(bytes.subarray(0, KEY_ID_BYTES)));
      if (!key) return null;
      try {
        const plain = await crypto.subtle.decrypt(
          {
            name: "AES-GCM",
            iv: bytes.subarray(KEY_ID_BYTES, KEY_ID_BYTES + IV_BYTES),
            additionalData: new TextEncoder().encode(binding),
          },
          key,
          bytes.subarray(KEY_ID_BYTES + IV_BYTES),
        );
        return new TextDecoder().decode(plain);
      } catch {
        return null;
      }
    },
  };
}

async function deriveKey(masterKey: Uint8Array<ArrayBuffer>): Promise<TokenKey> {
  const labelled = new Uint8Array(KEY_ID_LABEL.length + masterKey.length);
  labelled.set(KEY_ID_LABEL);
  labelled.set(masterKey, KEY_ID_LABEL.length);
  const id = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", labelled)).subarray(0, KEY_ID_BYTES));
  const material = await crypto.subtle.importKey("raw", masterKey, "HKDF", false, ["deriveKey"]);
  const key = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: HKDF_INFO },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  return { id, key };
}

function toHex(bytes: Uint8Array): string {
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function fromHex(hex: string): Uint8Array {
  return new Uint8Array(hex.match(/../g)!.map((pair) => parseInt(pair, 16)));
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}
