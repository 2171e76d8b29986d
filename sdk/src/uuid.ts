import { nodeBuiltin } from './builtin';

/**
 * A random (version 4) UUID: from Web Crypto where the runtime has it (Node ≥ 19, browsers),
 * else from node:crypto (Node 18, where Web Crypto is not a global yet).
 */
export function randomUuid(): string {
  const webCrypto = globalThis.crypto;
  if (typeof webCrypto?.randomUUID === 'function') return webCrypto.randomUUID();
  const nodeCrypto = nodeBuiltin<{ randomUUID: () => string }>('node:crypto');
  if (nodeCrypto) return nodeCrypto.randomUUID();
  return formatV4(randomBytes(webCrypto));
}

/**
 * From Web Crypto's getRandomValues, or from Math.random in a runtime without any crypto: an
 * idempotency key need not be secret (it is bound to the caller's API key), only unlikely to
 * repeat, which 122 random bits are.
 */
function randomBytes(webCrypto: typeof globalThis.crypto | undefined): Uint8Array {
  const bytes = new Uint8Array(16);
  if (typeof webCrypto?.getRandomValues === 'function') return webCrypto.getRandomValues(bytes);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return bytes;
}

function formatV4(bytes: Uint8Array): string {
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
