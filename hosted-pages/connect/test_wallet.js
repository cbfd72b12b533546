// QA only: a throwaway wallet that lives in this page, for trying the wallet
// flow without a real wallet (like a payment sandbox's test card). Its key is
// made here by crypto.getRandomValues and never leaves the page. It answers
// the few EIP-1193 requests the connect page makes and signs EIP-712 typed
// data itself: keccak-256, secp256k1 (with RFC 6979 nonces, as wallets sign)
// and the EIP-712 encoding, written out plainly with BigInt (slow, but a page
// signs two messages). The page serves this file only in QA.
"use strict";

(() => {
  // ---------------------------------------------------------------- keccak-256

  const MASK = (1n << 64n) - 1n;
  const ROUND_CONSTANTS = [];
  const ROTATIONS = [];
  const PERMUTATION = [];
  {
    // The round constants, rotation offsets and lane permutation of Keccak-f[1600], generated as the spec defines them.
    let x = 1, y = 0, lfsr = 1;
    for (let t = 0; t < 24; t++) {
      ROTATIONS[x + 5 * y] = BigInt(((t + 1) * (t + 2) / 2) % 64);
      [x, y] = [y, (2 * x + 3 * y) % 5];
    }
    for (let i = 0; i < 25; i++) PERMUTATION[i] = ((i % 5) * 2 + Math.floor(i / 5) * 3) % 5 * 5 + (i % 5);
    for (let round = 0; round < 24; round++) {
      let constant = 0n;
      for (let j = 0; j < 7; j++) {
        if (lfsr & 1) constant |= 1n << BigInt((1 << j) - 1);
        lfsr = (lfsr << 1) ^ (lfsr & 0x80 ? 0x71 : 0);
      }
      ROUND_CONSTANTS.push(constant);
    }
    ROTATIONS[0] = 0n;
  }

  const rotate = (lane, n) => n === 0n ? lane : ((lane << n) | (lane >> (64n - n))) & MASK;

  function keccakF(state) {
    for (let round = 0; round < 24; round++) {
      const c = [0, 1, 2, 3, 4].map((x) => state[x] ^ state[x + 5] ^ state[x + 10] ^ state[x + 15] ^ state[x + 20]);
      const d = [0, 1, 2, 3, 4].map((x) => c[(x + 4) % 5] ^ rotate(c[(x + 1) % 5], 1n));
      const b = new Array(25);
      for (let i = 0; i < 25; i++) {
        const x = i % 5, y = Math.floor(i / 5);
        // Theta, then rho and pi: lane (x, y) moves to (y, 2x + 3y).
        b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(state[i] ^ d[x], ROTATIONS[i]);
      }
      for (let i = 0; i < 25; i++) {
        const x = i % 5, row = i - x;
        state[i] = b[i] ^ (~b[row + (x + 1) % 5] & MASK & b[row + (x + 2) % 5]);
      }
      state[0] ^= ROUND_CONSTANTS[round];
    }
  }

  function keccak256(bytes) {
    const rate = 136;
    const padded = new Uint8Array(Math.ceil((bytes.length + 1) / rate) * rate);
    padded.set(bytes);
    padded[bytes.length] ^= 0x01;
    padded[padded.length - 1] ^= 0x80;
    const state = new Array(25).fill(0n);
    for (let offset = 0; offset < padded.length; offset += rate) {
      for (let i = 0; i < rate / 8; i++) {
        let lane = 0n;
        for (let j = 7; j >= 0; j--) lane = (lane << 8n) | BigInt(padded[offset + i * 8 + j]);
        state[i] ^= lane;
      }
      keccakF(state);
    }
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = Number((state[Math.floor(i / 8)] >> BigInt(8 * (i % 8))) & 0xffn);
    return out;
  }

  // ---------------------------------------------------------------- secp256k1

  const P = 2n ** 256n - 2n ** 32n - 977n;
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const G = [
    0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n,
    0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n,
  ];
  const mod = (a, m) => ((a % m) + m) % m;
  function power(base, exponent, m) {
    let result = 1n;
    base = mod(base, m);
    for (; exponent > 0n; exponent >>= 1n, base = base * base % m) if (exponent & 1n) result = result * base % m;
    return result;
  }
  const inverse = (a, m) => power(a, m - 2n, m);

  function add(a, b) {
    if (!a) return b;
    if (!b) return a;
    if (a[0] === b[0] && mod(a[1] + b[1], P) === 0n) return null;
    const slope = a[0] === b[0]
      ? mod(3n * a[0] * a[0] * inverse(2n * a[1], P), P)
      : mod((b[1] - a[1]) * inverse(b[0] - a[0], P), P);
    const x = mod(slope * slope - a[0] - b[0], P);
    return [x, mod(slope * (a[0] - x) - a[1], P)];
  }

  function multiply(k, point = G) {
    let result = null;
    for (let addend = point; k > 0n; k >>= 1n, addend = add(addend, addend)) if (k & 1n) result = add(result, addend);
    return result;
  }

  const toBigInt = (bytes) => bytes.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
  function toBytes(value, length = 32) {
    const out = new Uint8Array(length);
    for (let i = length - 1; i >= 0; i--, value >>= 8n) out[i] = Number(value & 0xffn);
    return out;
  }
  const hex = (bytes) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  function fromHex(text) {
    const clean = text.replace(/^0x/, "");
    return Uint8Array.from(clean.match(/../g) ?? [], (pair) => parseInt(pair, 16));
  }

  function randomScalar() {
    for (;;) {
      const k = toBigInt(crypto.getRandomValues(new Uint8Array(32)));
      if (k > 0n && k < N) return k;
    }
  }

  function addressOf(privateKey) {
    const [x, y] = multiply(privateKey);
    const publicKey = new Uint8Array(64);
    publicKey.set(toBytes(x));
    publicKey.set(toBytes(y), 32);
    return `0x${hex(keccak256(publicKey).slice(12))}`;
  }

  async function hmacSha256(key, ...parts) {
    const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, concat(...parts)));
  }

  /**
   * RFC 6979 nonce candidates (HMAC-SHA256, section 3.2): the same key and
   * digest always give the same signature, so a weak random source cannot
   * leak the key, and the signatures match any other RFC 6979 signer's.
   */
  async function* deterministicNonces(digest, privateKey) {
    const x = toBytes(privateKey);
    const h = toBytes(mod(toBigInt(digest), N));
    let v = new Uint8Array(32).fill(1);
    let k = new Uint8Array(32);
    k = await hmacSha256(k, v, Uint8Array.of(0), x, h);
    v = await hmacSha256(k, v);
    k = await hmacSha256(k, v, Uint8Array.of(1), x, h);
    v = await hmacSha256(k, v);
    for (;;) {
      v = await hmacSha256(k, v);
      const candidate = toBigInt(v);
      if (candidate > 0n && candidate < N) yield candidate;
      // Out of range, or refused by the signer (r or s zero): step on as the RFC says.
      k = await hmacSha256(k, v, Uint8Array.of(0));
      v = await hmacSha256(k, v);
    }
  }

  /** ECDSA over a 32-byte digest: r ‖ s ‖ v with low s and v 27 or 28, as Ethereum wallets sign. */
  async function sign(digest, privateKey) {
    const z = toBigInt(digest);
    for await (const k of deterministicNonces(digest, privateKey)) {
      const point = multiply(k);
      const r = mod(point[0], N);
      if (r === 0n) continue;
      let s = mod(inverse(k, N) * (z + r * privateKey), N);
      if (s === 0n) continue;
      let recovery = Number(point[1] & 1n);
      if (s > N / 2n) {
        s = N - s;
        recovery ^= 1;
      }
      return `0x${hex(toBytes(r))}${hex(toBytes(s))}${(27 + recovery).toString(16)}`;
    }
  }

  // ---------------------------------------------------------------- EIP-712

  const utf8 = (text) => new TextEncoder().encode(text);
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let at = 0;
    for (const part of parts) out.set(part, (at += part.length) - part.length);
    return out;
  };

  function encodeValue(type, value) {
    if (type === "string") return keccak256(utf8(value));
    if (type === "bytes") return keccak256(fromHex(value));
    if (type === "address") return toBytes(BigInt(value));
    if (type === "bool") return toBytes(value ? 1n : 0n);
    if (/^bytes\d+$/.test(type)) {
      const out = new Uint8Array(32);
      out.set(fromHex(value));
      return out;
    }
    if (/^u?int\d*$/.test(type)) return toBytes(mod(BigInt(value), 2n ** 256n));
    throw new Error(`The test wallet does not sign fields of type ${type}`);
  }

  function hashStruct(types, primaryType, data) {
    const fields = types[primaryType];
    const typeString = `${primaryType}(${fields.map((field) => `${field.type} ${field.name}`).join(",")})`;
    return keccak256(concat(keccak256(utf8(typeString)), ...fields.map((f) => encodeValue(f.type, data[f.name]))));
  }

  function typedDataDigest(typedData) {
    return keccak256(concat(
      Uint8Array.of(0x19, 0x01),
      hashStruct(typedData.types, "EIP712Domain", typedData.domain),
      hashStruct(typedData.types, typedData.primaryType, typedData.message),
    ));
  }

  // ---------------------------------------------------------------- the wallet

  /**
   * A wallet with an EIP-1193 `request` for the methods the connect page uses:
   * a fresh key, or (for tests comparing signatures with another signer) the
   * 0x-prefixed key given.
   */
  globalThis.createTestWallet = (privateKeyHex) => {
    const privateKey = privateKeyHex ? toBigInt(fromHex(privateKeyHex)) : randomScalar();
    if (privateKey <= 0n || privateKey >= N) throw new RangeError("Not a secp256k1 private key");
    const address = addressOf(privateKey);
    return {
      address,
      request({ method, params = [] }) {
        switch (method) {
          case "eth_requestAccounts":
          case "eth_accounts":
            return Promise.resolve([address]);
          case "eth_chainId":
            return Promise.resolve("0xa4b1");
          case "eth_signTypedData_v4":
            return sign(typedDataDigest(JSON.parse(params[1])), privateKey);
          default:
            return Promise.reject(Object.assign(new Error(`Unsupported method ${method}`), { code: 4200 }));
        }
      },
    };
  };
})();
