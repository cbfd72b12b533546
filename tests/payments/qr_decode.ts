/**
 * Reading back a QR code the service drew (domain/payments/qr_svg.ts) with an
 * independent decoder (jsQR, a camera-style reader): the SVG's unit squares
 * are painted into an image, 8 pixels a module, and decoded from the pixels.
 */
import jsQRModule from "jsqr";

// jsQR is CommonJS whose types declare an ES default export: the function is the module itself at run time.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

const PIXELS_PER_MODULE = 8;

/** The text of the QR code in an SVG `data:` URL as qr_svg.ts writes it; throws when nothing can be read. */
export function decodeQrDataUrl(dataUrl: string): string {
  const svg = atob(dataUrl.replace(/^data:image\/svg\+xml;base64,/, ""));
  const side = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
  const path = /<path [^>]*d="([^"]*)"/.exec(svg)?.[1] ?? "";
  const width = side * PIXELS_PER_MODULE;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const [, x, y] of path.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    for (let dy = 0; dy < PIXELS_PER_MODULE; dy++) {
      for (let dx = 0; dx < PIXELS_PER_MODULE; dx++) {
        const at = ((Number(y) * PIXELS_PER_MODULE + dy) * width + Number(x) * PIXELS_PER_MODULE + dx) * 4;
        pixels.set([0, 0, 0], at);
      }
    }
  }
  const code = jsQR(pixels, width, width);
  if (!code) throw new Error("No QR code could be read from the image");
  return code.data;
}
