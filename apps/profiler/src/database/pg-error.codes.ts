/** Postgres SQLSTATEs the use cases translate into domain error codes. */
export const PgError = {
  UNIQUE_VIOLATION: '23505',
  FOREIGN_KEY_VIOLATION: '23503',
} as const;

/** The SQLSTATE of a failed TypeORM query (QueryFailedError wraps the pg error), if any. */
export function sqlState(e: unknown): string | undefined {
  const driver = (e as { driverError?: { code?: unknown } })?.driverError;
  const code = driver?.code ?? (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Socket errors of a database that is down or unreachable. */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
/** SQLSTATEs of a server shutting down or not yet accepting connections (class 57P), besides class 08 (connection exceptions). */
const UNREACHABLE_STATES = new Set(['57P01', '57P02', '57P03']);

/**
 * True when `e` says the database cannot be reached (down, restarting, the connection cut),
 * rather than that a query was wrong: such a request may succeed once the database is back.
 */
export function isDatabaseUnreachable(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c && depth < 4; c = (c as { cause?: unknown }).cause, depth++) {
    const code = sqlState(c);
    if (code && (UNREACHABLE_ERRNO.has(code) || UNREACHABLE_STATES.has(code) || code.startsWith('08'))) return true;
    const errors = (c as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((x) => isDatabaseUnreachable(x))) return true;
    const message = String((c as { message?: unknown }).message ?? '');
    if (/Connection terminated|connection timeout|Client has encountered a connection error|Connection refused/i.test(message)) return true;
  }
  return false;
}

/** What a client is told while the database is unreachable. */
export const DATABASE_UNREACHABLE_MESSAGE =
  "the profiler's database is unreachable: profiles, plans and jobs are " +
  'unavailable until it is back (serving is unaffected); retry shortly';
