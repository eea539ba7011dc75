/**
 * A connection URL fit for a log line: the password (if any) masked. An unparsable URL may hold
 * a secret in any part, so it is not echoed at all.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable URL>';
  }
}
