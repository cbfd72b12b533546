/**
 * AES-256-GCM encryption of secrets at rest (venue API secrets, agent keys,
 * webhook signing secrets) with the MASTER_KEY.
 *
 * Sealed form: `v1.<base64 iv>.<base64 ciphertext+tag>`. The version prefix
 * leaves room for key rotation without guessing the format of old rows.
 */
import type { SecretOpener } from "../../venues/types.ts";

const VERSION = "v1";

export interface SecretBox extends SecretOpener {
  seal(plain: string): Promise<string>;
}

export async function createSecretBox(masterKeyBase64: string): Promise<SecretBox> {
  const raw = base64ToBytes(masterKeyBase64);
  if (raw.length !== 32) throw new RangeError("MASTER_KEY must decode to exactly 32 bytes");
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  return {
    async seal(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const cipher = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(plain));
      return `${VERSION}.${bytesToBase64(iv)}.${bytesToBase64(new Uint8Array(cipher))}`;
    },
    async open(sealed) {
      const [version, iv, cipher] = sealed.split(".");
      if (version !== VERSION || !iv || !cipher) throw new Error("Sealed secret has an unknown format");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: base64ToBytes(iv) },
        key,
        base64ToBytes(cipher),
      );
      return new TextDecoder().decode(plain);
    },
  };
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
