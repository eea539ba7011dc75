import type { Schema } from '@mnemo/service-kit';

/** Node ↔ node chunk transfer: deadlines, the shared token and mutual TLS. */
export const peersSchema = {
  NODE_PEER_TIMEOUT_MS: { type: 'int', doc: 'node ↔ node chunk fetch: deadline of one FetchChunks stream', default: 30_000, min: 100 },
  NODE_PEER_DEADLINE_BASE_MS: {
    type: 'int',
    doc:
      "node ↔ node chunk fetch: fixed part of each chunk's deadline (the rest is 4 × its size over the " +
      'link speed measured to that peer); a chunk later than that is a miss and its sequence recomputes',
    default: 500,
    min: 10,
  },
  NODE_PEER_TOKEN: {
    type: 'string',
    doc:
      'shared secret of node ↔ node gRPC: sent as a bearer token on every chunk ' +
      'fetch, and required of every caller when set (same value on every node)',
    secret: true,
  },
  NODE_GRPC_TLS_CA: {
    type: 'string',
    doc:
      'node ↔ node gRPC TLS: PEM file of the private CA; with NODE_GRPC_TLS_CERT and _KEY every chunk fetch is mutual TLS ' +
      '(peers without a certificate of this CA are refused)',
  },
  NODE_GRPC_TLS_CERT: { type: 'string', doc: "node ↔ node gRPC TLS: PEM file of this node's certificate (signed by NODE_GRPC_TLS_CA)" },
  NODE_GRPC_TLS_KEY: { type: 'string', doc: "node ↔ node gRPC TLS: PEM file of this node's private key", secret: true },
} as const satisfies Schema;
