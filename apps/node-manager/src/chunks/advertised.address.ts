import { hostname } from 'node:os';

/**
 * What peers dial: NODE_GRPC_ADVERTISE (with its own port, or the bound one); else the bind
 * host, except a wildcard bind, which nobody can dial, where the machine's hostname stands in.
 */
export function advertisedAddress(advertise: string | undefined, host: string, port: number, machine: string = hostname()): string {
  const a = advertise?.trim();
  if (a) return /(^[^:]+|\]):\d+$/.test(a) ? a : `${a}:${port}`;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  return `${wildcard ? machine : host}:${port}`;
}
