/**
 * The Postgres SQLSTATE codes the service acts on
 * (https://www.postgresql.org/docs/15/errcodes-appendix.html), grouped by what they mean for
 * the caller.
 */
export const PG_ERROR = {
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  queryCanceled: '57014',
  lockNotAvailable: '55P03',
  idleInTransactionTimeout: '25P03',
  readOnlyTransaction: '25006',
  cannotConnectNow: '57P03',
  connectionFailure: '08006',
  unableToConnect: '08001',
  stringTooLong: '22001',
  numericOutOfRange: '22003',
  characterNotInRepertoire: '22021',
  invalidTextRepresentation: '22P02',
  untranslatableCharacter: '22P05',
} as const;

/** The transaction lost to a concurrent one and was rolled back: running it again can succeed. */
export const PG_RETRYABLE_TRANSACTION: ReadonlySet<string> = new Set([PG_ERROR.deadlockDetected, PG_ERROR.serializationFailure]);

/**
 * The server is going away, starting up, unreachable, past a statement's deadline (a statement
 * or lock time-out cancels it) or refusing writes (a read-only server): the caller may retry
 * once it is back.
 */
export const PG_CONNECTION_LOST: ReadonlySet<string> = new Set([
  PG_ERROR.adminShutdown,
  PG_ERROR.crashShutdown,
  PG_ERROR.queryCanceled,
  PG_ERROR.lockNotAvailable,
  PG_ERROR.idleInTransactionTimeout,
  PG_ERROR.readOnlyTransaction,
  PG_ERROR.cannotConnectNow,
  PG_ERROR.connectionFailure,
  PG_ERROR.unableToConnect,
]);

/** Postgres refusing the data itself (bad encoding, invalid text, out of range): retrying cannot help. */
export const PG_BAD_DATA: ReadonlySet<string> = new Set([
  PG_ERROR.stringTooLong,
  PG_ERROR.numericOutOfRange,
  PG_ERROR.characterNotInRepertoire,
  PG_ERROR.invalidTextRepresentation,
  PG_ERROR.untranslatableCharacter,
]);

/** The `code` of an error: a SQLSTATE from Postgres, an errno name (ECONNREFUSED…) from Node. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
