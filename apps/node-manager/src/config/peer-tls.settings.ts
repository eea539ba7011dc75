import { readFileSync } from 'node:fs';

/** PEM bytes of node ↔ node mutual TLS: the private CA, and this node's certificate and key (signed by it). */
export interface PeerTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** The three NODE_GRPC_TLS_* files read, or problems (all three or none; each readable PEM). */
export function loadPeerTls(env: { NODE_GRPC_TLS_CA?: string; NODE_GRPC_TLS_CERT?: string; NODE_GRPC_TLS_KEY?: string }): {
  tls?: PeerTls;
  problems: string[];
} {
  const names = ['NODE_GRPC_TLS_CA', 'NODE_GRPC_TLS_CERT', 'NODE_GRPC_TLS_KEY'] as const;
  const given = names.filter((n) => env[n]);
  if (given.length === 0) return { problems: [] };
  if (given.length < 3) return { problems: [`node ↔ node TLS needs all of ${names.join(', ')} (PEM files); only ${given.join(', ')} set`] };
  const problems: string[] = [];
  const read = (n: (typeof names)[number]): Buffer => {
    try {
      const b = readFileSync(env[n]!);
      if (!b.toString('latin1').includes('-----BEGIN ')) problems.push(`${n}=${env[n]}: not a PEM file`);
      return b;
    } catch (e) {
      problems.push(`${n}=${env[n]}: cannot read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
      return Buffer.alloc(0);
    }
  };
  const tls = { ca: read('NODE_GRPC_TLS_CA'), cert: read('NODE_GRPC_TLS_CERT'), key: read('NODE_GRPC_TLS_KEY') };
  return problems.length > 0 ? { problems } : { tls, problems };
}
