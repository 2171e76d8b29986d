const SEND = 'send Authorization: Bearer <key>';
/** A credential that looks like one of our keys, sent without its scheme. */
const LOOKS_LIKE_A_KEY = /^cos_sk_/i;

/**
 * The key in an `Authorization: Bearer <key>` header, or what is wrong with the header in words
 * a client can act on. Only an absent header is "missing"; the scheme name is case-insensitive
 * (RFC 9110). The key's format and validity are checked by the caller.
 */
export function readBearerKey(header: string | undefined): { key: string } | { problem: string } {
  if (header === undefined) return { problem: `Missing API key: ${SEND}` };
  const parts = header.trim().split(/\s+/);
  const [scheme = '', ...credentials] = parts[0] === '' ? [] : parts;
  if (scheme === '') return { problem: `Authorization header is empty: ${SEND}` };
  if (scheme.toLowerCase() !== 'bearer') {
    if (credentials.length === 0 && LOOKS_LIKE_A_KEY.test(scheme)) {
      return { problem: `Authorization must use the Bearer scheme: ${SEND}, not the key alone` };
    }
    return { problem: 'Authorization must use the Bearer scheme: Authorization: Bearer <key>' };
  }
  if (credentials.length === 0) return { problem: `Authorization: Bearer has no key: ${SEND}` };
  if (credentials.length > 1) return { problem: 'Authorization: Bearer must be followed by exactly one key' };
  return { key: credentials[0]! };
}
