import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsUsers, type NatsRole } from './nats.auth.js';
import { hasOpenssl, makePrivateCa } from './tls.ca.js';

/** Per-run secrets of a local cluster (makeLocalSecrets). */
export interface LocalSecrets {
  /** The 0700 directory of the CA, certificates and keys. */
  dir: string;
  /** Whether openssl was there to make the CA: NATS and node ↔ node gRPC speak TLS. */
  tls: boolean;
  /** Arguments of startNats: the authorization block and the server certificate. */
  nats: { authorization: string; tls?: { cert: string; key: string } };
  /** A service's environment: NATS_USER / NATS_PASSWORD / NATS_TLS_CA and, for a node, NODE_GRPC_TLS_*. */
  envFor(role: NatsRole, nodeId?: string): Record<string, string>;
  /** Deletes `dir`. */
  remove(): void;
}

/**
 * Everything a private local cluster needs to let no one in (what `npm start` makes per run):
 * a NATS user per service and per node with its permissions, and — when `openssl` is there — a
 * private CA with a certificate for NATS and one per node (node ↔ node mutual TLS). Files live in
 * a 0700 temporary directory that `remove()` deletes. `envFor(role, nodeId)` is a service's
 * environment: NATS_USER / NATS_PASSWORD / NATS_TLS_CA and, for a node, NODE_GRPC_TLS_*.
 */
export function makeLocalSecrets(opts: { nodes: string[]; log?: (line: string) => void }): LocalSecrets {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-secrets-'));
  const { users, conf } = natsUsers({ nodes: opts.nodes });
  const tlsOn = hasOpenssl();
  if (!tlsOn) opts.log?.('openssl is not installed: NATS and node ↔ node gRPC run without TLS (`apt-get install openssl` for TLS)');
  const loopback = ['localhost', '127.0.0.1'];
  const pki = tlsOn ? makePrivateCa(dir, { nats: loopback, ...Object.fromEntries(opts.nodes.map((n) => [n, loopback])) }) : undefined;
  return {
    dir,
    tls: Boolean(pki),
    nats: { authorization: conf, ...(pki ? { tls: pki.certs.nats } : {}) },
    envFor(role, nodeId) {
      const u = users[role === 'node' ? `node:${nodeId}` : role];
      if (!u) throw new RangeError(`no NATS user for ${role}${nodeId ? ` ${nodeId}` : ''}`);
      const peer = role === 'node' && pki ? pki.certs[nodeId ?? ''] : undefined;
      return {
        NATS_USER: u.user,
        NATS_PASSWORD: u.password,
        ...(pki ? { NATS_TLS_CA: pki.ca } : {}),
        ...(peer && pki ? { NODE_GRPC_TLS_CA: pki.ca, NODE_GRPC_TLS_CERT: peer.cert, NODE_GRPC_TLS_KEY: peer.key } : {}),
      };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
