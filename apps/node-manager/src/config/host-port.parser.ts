/** `host`, `host:port`, `[v6]` or `[v6]:port`; null when it is none of those or the port is out of 1–65535. */
export function parseHostPort(value: string): { host: string; port?: number } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return null;
  if (m[2] === undefined) return { host: m[1] };
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1], port } : null;
}
