/**
 * A QR code drawn by the service as SVG (the payment page shows it as a
 * `data:` image: no third-party request, nothing for the page to compute).
 * The symbol comes from `qrcode-generator` (byte mode, error correction M:
 * readable with 15% of it damaged, as a phone camera at an angle needs; the
 * smallest version that holds the text); here it is only drawn: one path of
 * unit squares with the four-module quiet zone the standard asks for.
 */
import qrcode from "qrcode-generator";

const QUIET_ZONE = 4;

/** The symbol's modules, row by row (true: dark). */
export function qrMatrix(text: string): boolean[][] {
  const qr = qrcode(0, "M");
  qr.addData(text, "Byte");
  qr.make();
  const size = qr.getModuleCount();
  return Array.from({ length: size }, (_, row) => Array.from({ length: size }, (_, col) => qr.isDark(row, col)));
}

/** The symbol as an SVG document, one viewBox unit per module, the quiet zone included. */
export function qrSvg(text: string): string {
  const matrix = qrMatrix(text);
  const side = matrix.length + 2 * QUIET_ZONE;
  const squares: string[] = [];
  matrix.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (dark) squares.push(`M${x + QUIET_ZONE} ${y + QUIET_ZONE}h1v1h-1z`);
    })
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges">` +
    `<rect width="${side}" height="${side}" fill="#fff"/><path fill="#000" d="${squares.join("")}"/></svg>`;
}

/** The SVG as a `data:` URL an `<img>` can show under `img-src 'self' data:`. */
export function qrSvgDataUrl(text: string): string {
  return `data:image/svg+xml;base64,${btoa(qrSvg(text))}`;
}
