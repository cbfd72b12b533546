/**
 * `X-Svc-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<raw body>` under
 * the signing secret, lowercase hex; during a rotation one `v1=` per secret.
 */
export async function signatureHeader(secrets: string[], timestamp: number, body: string): Promise<string> {
  const signed = new TextEncoder().encode(`${timestamp}.${body}`);
  const parts = [`t=${timestamp}`];
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
    parts.push(`v1=${Array.from(mac, (byte) => byte.toString(16).padStart(2, "0")).join("")}`);
  }
  return parts.join(",");
}
