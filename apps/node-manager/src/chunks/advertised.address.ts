import { hostname } from 'node:os';

/** `host`, `host:port`, `[v6]` or `[v6]:port`; null when it is none of those or the port is out of 1–65535. */
export function parseHostPort(value: string): { host: string; port?: number } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return null;
  if (m[2] === undefined) return { host: m[1] };
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1], port } : null;
}

/**
 * What peers dial: NODE_GRPC_ADVERTISE (with its own port, or the bound one); else the bind
 * host, except a wildcard bind, which nobody can dial, where the machine's hostname stands in.
 * The advertise value was validated at start-up (parseHostPort).
 */
export function advertisedAddress(advertise: string | undefined, host: string, port: number, machine: string = hostname()): string {
  const a = advertise?.trim() ? parseHostPort(advertise.trim()) : null;
  if (a) return `${a.host}:${a.port ?? port}`;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  return `${wildcard ? machine : host}:${port}`;
}
