/**
 * The `returnUrl` of a connect or payment session: shown on the hosted page as
 * a back button, so it must lead to the partner and nowhere else. It must be
 * https, carry no credentials, and its origin (scheme, host, port) must equal
 * one the contract registered, compared after the URL parser normalised both,
 * so case, default ports, IDN and percent-encoding cannot make a look-alike pass.
 */
import { ApiError } from "../errors.ts";
import { isPrintableText } from "../text.ts";

const MAX_LENGTH = 2048;

/** The normalised URL to keep and show, or RETURN_URL_NOT_ALLOWED. */
export function allowedReturnUrl(candidate: string, registeredOrigins: readonly string[]): string {
  // The parser silently drops tabs and line breaks and trims spaces: refuse such input instead of guessing.
  if (candidate.length > MAX_LENGTH || !isPrintableText(candidate) || /[\s\\]/.test(candidate)) throw refused();
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw refused();
  }
  if (url.protocol !== "https:" || url.username || url.password) throw refused();
  const origins = new Set(registeredOrigins.flatMap((origin) => originOf(origin) ?? []));
  if (!origins.has(url.origin)) throw refused();
  return url.href;
}

function originOf(registered: string): string | null {
  try {
    return new URL(registered).origin;
  } catch {
    return null;
  }
}

function refused(): ApiError {
  return new ApiError("RETURN_URL_NOT_ALLOWED");
}
