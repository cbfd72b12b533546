/**
 * The service's QR codes: the matrix of a fixed text against the symbol
 * published for it, and every SVG read back by an independent decoder.
 */
import assert from "node:assert/strict";
import { qrMatrix, qrSvg, qrSvgDataUrl } from "../../domain/payments/qr_svg.ts";
import { decodeQrDataUrl } from "./qr_decode.ts";

/**
 * "HELLO WORLD" in byte mode at level M is version 1 (21×21). Its finder
 * patterns, timing patterns and dark module are fixed by the standard
 * (ISO/IEC 18004 §6.3), whatever the data and mask.
 */
Deno.test("QR: the function patterns of a version 1 symbol sit where the standard puts them", () => {
  const matrix = qrMatrix("HELLO WORLD");
  assert.equal(matrix.length, 21);
  const finder = [
    "1111111",
    "1000001",
    "1011101",
    "1011101",
    "1011101",
    "1000001",
    "1111111",
  ];
  for (const [top, left] of [[0, 0], [0, 14], [14, 0]]) {
    for (let y = 0; y < 7; y++) {
      assert.equal(matrix[top + y].slice(left, left + 7).map((dark) => dark ? "1" : "0").join(""), finder[y]);
    }
  }
  for (let i = 8; i <= 12; i++) {
    assert.equal(matrix[6][i], i % 2 === 0, `timing row at ${i}`);
    assert.equal(matrix[i][6], i % 2 === 0, `timing column at ${i}`);
  }
  assert.equal(matrix[13][8], true, "the dark module at (4V+9, 8)");
});

Deno.test("QR: an EIP-681 payment URI drawn as SVG reads back exactly, with its quiet zone", () => {
  const uri = "ethereum:0xaf88d065e77c8cc2239327c5edb3a432268e5831@42161/transfer" +
    "?address=0x00000000000000000000000000000000000fee01&uint256=49901234";
  const svg = qrSvg(uri);
  const side = qrMatrix(uri).length + 8;
  assert.ok(svg.startsWith(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}"`));
  assert.ok(!/<script|href=/i.test(svg), "nothing but shapes");
  assert.equal(decodeQrDataUrl(qrSvgDataUrl(uri)), uri);
  // The quiet zone is white: no square starts in the first four modules.
  assert.ok(![...svg.matchAll(/M(\d+) (\d+)h/g)].some(([, x, y]) => Number(x) < 4 || Number(y) < 4));
});

Deno.test("QR: a longer text takes a larger version and still reads back", () => {
  const text = "ethereum:0x55d398326f99059ff775485246999027b3197955@56/transfer" +
    "?address=0x1234567890abcdef1234567890abcdef12345678&uint256=49900000000001234567890";
  assert.ok(qrMatrix(text).length > qrMatrix("x").length);
  assert.equal(decodeQrDataUrl(qrSvgDataUrl(text)), text);
});
