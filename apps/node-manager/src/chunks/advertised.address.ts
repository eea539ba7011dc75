import { hostname } from 'node:os';
import { parseHostPort } from '../config/host-port.parser.js';

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
