const SECRET_KEY = /pass(word|phrase)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key|session[-_]?id/i;

const SECRET_VALUES: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{30,}\b/g,
  /\bsk-[A-Za-z0-9_-]{20,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /(?<=:\/\/[^/\s:@]+:)[^@\s/]+(?=@)/g,
];

export const REDACTED = '[REDACTED]';
const MAX_PREVIEW_CHARS = 256;
/**
 * Only the kept preview and this much after it are scanned: a secret that starts in the preview
 * ends within it (a PEM key that runs on is redacted to the end of the scan), and a 50 MB argument
 * costs what its first 8 KiB cost.
 */
const SCAN_MARGIN_CHARS = 8 * 1024;

/** Whether values under `key` are secrets: a secret-looking name, or one holding any of `extraKeys`. */
export function isSecretKey(key: string, extraKeys: readonly string[] = []): boolean {
  const lower = key.toLowerCase();
  return SECRET_KEY.test(key) || extraKeys.some((k) => lower.includes(k.toLowerCase()));
}

export function redactText(text: string): string {
  let result = text;
  for (const pattern of SECRET_VALUES) result = result.replace(pattern, REDACTED);
  return result;
}

/**
 * A copy of tool arguments fit for the audit log: values under secret-looking keys and
 * secret-looking substrings are replaced, long strings are cut.
 */
export function redactArguments(value: unknown, extraKeys: readonly string[] = [], depth = 0): unknown {
  if (depth > 8) return '[…]';
  if (typeof value === 'string') {
    const scanned = value.length > MAX_PREVIEW_CHARS + SCAN_MARGIN_CHARS ? value.slice(0, MAX_PREVIEW_CHARS + SCAN_MARGIN_CHARS) : value;
    const redacted = redactText(scanned);
    return redacted.length > MAX_PREVIEW_CHARS || scanned !== value ? `${redacted.slice(0, MAX_PREVIEW_CHARS)}…(${value.length} chars)` : redacted;
  }
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => redactArguments(item, extraKeys, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = isSecretKey(key, extraKeys) ? REDACTED : redactArguments(inner, extraKeys, depth + 1);
    return out;
  }
  return value;
}
