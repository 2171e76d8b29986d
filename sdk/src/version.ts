/** This package's version (as in its package.json), sent in the User-Agent header. */
export const SDK_VERSION = '0.1.0';
