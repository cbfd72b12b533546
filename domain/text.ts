/** Rules for text the service stores and shows. */

/**
 * Text the service can store and answer byte for byte: well-formed UTF-16 (no
 * unpaired surrogate, which UTF-8 cannot carry) and no C0 or C1 control
 * character (invisible in any display, and NUL cuts strings short in the
 * database driver).
 */
export function isPrintableText(value: string): boolean {
  if (!value.isWellFormed()) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return false;
  }
  return true;
}
