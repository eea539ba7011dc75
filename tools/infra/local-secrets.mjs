import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsUsers } from './nats-auth.mjs';
import { hasOpenssl, makePrivateCa } from './tls.mjs';

/**
 * Everything a private local cluster needs to let no one in (what `npm start` makes per run):
 * a NATS user per service and per node with its permissions, and — when `openssl` is there — a
 * private CA with a certificate for NATS and one per node (node ↔ node mutual TLS). Files live in
 * a 0700 temporary directory that `remove()` deletes. `envFor(role, nodeId)` is a service's
 * environment: NATS_USER / NATS_PASSWORD / NATS_TLS_CA and, for a node, NODE_GRPC_TLS_*.
 * @param {{ nodes: string[], log?: (line: string) => void }} opts
 */
export function makeLocalSecrets(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-secrets-'));
  const { users, conf } = natsUsers({ nodes: opts.nodes });
  const tlsOn = hasOpenssl();
  if (!tlsOn) opts.log?.('openssl is not installed: NATS and node ↔ node gRPC run without TLS (`apt-get install openssl` for TLS)');
  const loopback = ['localhost', '127.0.0.1'];
  const pki = tlsOn ? makePrivateCa(dir, { nats: loopback, ...Object.fromEntries(opts.nodes.map((n) => [n, loopback])) }) : undefined;
  return {
    dir,
    tls: Boolean(pki),
    /** Arguments of startNats: the authorization block and the server certificate. */
    nats: { authorization: conf, ...(pki ? { tls: pki.certs.nats } : {}) },
    /**
     * @param {'scheduler' | 'gateway' | 'profiler' | 'node'} role @param {string} [nodeId]
     * @returns {Record<string, string>}
     */
    envFor(role, nodeId) {
      const u = users[role === 'node' ? `node:${nodeId}` : role];
      if (!u) throw new RangeError(`no NATS user for ${role}${nodeId ? ` ${nodeId}` : ''}`);
      const peer = role === 'node' && pki ? pki.certs[/** @type {string} */ (nodeId)] : undefined;
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
