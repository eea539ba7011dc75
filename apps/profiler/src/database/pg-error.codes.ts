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
