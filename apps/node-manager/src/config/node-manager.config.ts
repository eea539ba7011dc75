import { hostname } from 'node:os';
import { isSubjectToken, toSubjectToken } from '@mnemo/proto';
import { commonSchema, opsSchema, ConfigError, loadConfig, type ConfigOf, type Schema } from '@mnemo/service-kit';
import { parseHostPort } from './host-port.parser.js';
import { loadPeerTls, type PeerTls } from './peer-tls.settings.js';
import { parseByteSize, parseKvStoreSettings, type KvStoreSettings } from './kv-store.settings.js';
import { NO_CATALOG, parseDroidSpeakSettings, type CatalogBase, type DroidSpeakSettings } from './droidspeak.settings.js';
import { parseSimKvBytes, type SimKvBytes } from './sim-kv.settings.js';
import { engineSchema, isSim } from './engine.schema.js';
import { schedulingSchema } from './scheduling.schema.js';
import { kvStoreSchema } from './kv-store.schema.js';
import { prefetchSchema } from './prefetch.schema.js';
import { peersSchema } from './peers.schema.js';
import { droidSpeakSchema } from './droidspeak.schema.js';
import { whySchema } from './why.schema.js';
import { vllmEventsSchema } from './vllm-events.schema.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The node-manager's environment (docs/DEVELOPMENT.md), composed of one schema per feature
 * (`config/*.schema.ts`); validated once at boot, every problem listed.
 */
export const nodeManagerSchema = {
  ...commonSchema,
  ...opsSchema,
  METRICS_PORT: { type: 'int', doc: 'HTTP port of /metrics, /healthz, /readyz (0 = any free port)', default: 9403, min: 0, max: 65535 },
  NODE_ID: { type: 'string', doc: 'unique node id, [A-Za-z0-9_-]+ (default: hostname-pid)' },
  NODE_ENGINE: {
    type: 'enum',
    doc: 'engine: sim (cost model) or reference (real transformer)',
    values: ['sim', 'reference'],
    default: 'reference',
  },
  NODE_MODELS: {
    type: 'list',
    doc: 'model ids served (synthetic catalog ids, or model directories for reference)',
    default: ['mnemo-tiny'],
  },
  NODE_MAX_BATCH: { type: 'int', doc: 'sequences per iteration (decode + prefill)', default: 8, min: 1, max: 4096 },
  NODE_MAX_PREFILL_TOKENS: { type: 'int', doc: 'prompt tokens prefilled per iteration', default: 8192, min: 1 },
  NODE_MAX_WAITING: { type: 'int', doc: 'queued requests before new ones are refused as overloaded', default: 256, min: 1 },
  NODE_HEARTBEAT_MS: {
    type: 'int',
    doc: 'heartbeat period (the scheduler drops a node after SCHEDULER_NODE_TIMEOUT_MS, 1500 by default, without one)',
    default: 500,
    min: 20,
  },
  NODE_FINISH_BEAT_MS: {
    type: 'int',
    doc:
      'a request leaving the node (finished, cancelled) sends a heartbeat at once, then at most ' +
      'one per this period, so schedulers stop counting it as queued; 0 = periodic heartbeats only',
    default: 50,
    min: 0,
  },
  NODE_GRPC_HOST: { type: 'string', doc: 'host the chunk-transfer gRPC server binds (0.0.0.0 in containers)', default: '127.0.0.1' },
  NODE_GRPC_ADVERTISE: { type: 'string', doc: 'host[:port] peers dial, sent in heartbeats (default: NODE_GRPC_HOST and the bound port)' },
  NODE_GRPC_PORT: { type: 'int', doc: 'node ↔ node chunk transfer (gRPC), 0 = any free port', default: 0, min: 0, max: 65535 },
  NODE_DRAIN_TIMEOUT_MS: {
    type: 'int',
    doc: 'on shutdown, how long running requests may finish before they are cancelled',
    default: 5000,
    min: 0,
  },
  NODE_ADMIT_REPLY_DELAY_MS: {
    type: 'int',
    doc:
      'fault injection, 0 in production: answer the scheduler this long ' +
      'after queueing an admitted request (reproduces a late admission)',
    default: 0,
    min: 0,
  },
  ...engineSchema,
  ...schedulingSchema,
  ...kvStoreSchema,
  ...prefetchSchema,
  ...peersSchema,
  ...droidSpeakSchema,
  ...whySchema,
  ...vllmEventsSchema,
} as const satisfies Schema;

export type NodeManagerConfig = ConfigOf<typeof nodeManagerSchema> & {
  readonly NODE_ID: string;
  readonly kvStore: KvStoreSettings;
  readonly droidSpeak: DroidSpeakSettings;
  /** NODE_SIM_KV_BYTES parsed; undefined: the sim keeps no KV bytes (or the engine is not the sim). */
  readonly simKvBytes?: SimKvBytes;
  /** NODE_KV_DEVICE_BYTES parsed; undefined: NODE_KV_BLOCKS per model. */
  readonly kvDeviceBytes?: number;
  /** NODE_GRPC_TLS_* read: node ↔ node gRPC is mutual TLS; undefined: plaintext (the peer token still applies). */
  readonly peerTls?: PeerTls;
};

/** Injection token of the validated configuration. */
export const NODE_CONFIG = Symbol('NODE_CONFIG');

/** A bearer token's characters (RFC 6750 token68), at least this many of them. */
const PEER_TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;
export const PEER_TOKEN_MIN_CHARS = 16;

/**
 * Node ↔ node gRPC serves tenants' KV: bound beyond loopback, it must require the shared token,
 * and the token must be one a header can carry and a guess cannot find.
 */
export function peerTokenProblems(grpcHost: string, token: string | undefined): string[] {
  if (token === undefined) {
    const loopback = grpcHost === 'localhost' || grpcHost === '::1' || /^127\.\d+\.\d+\.\d+$/.test(grpcHost);
    return loopback
      ? []
      : [
          `NODE_PEER_TOKEN is required when NODE_GRPC_HOST=${JSON.stringify(grpcHost)} is reachable ` +
            `from other hosts: node ↔ node gRPC serves tenants' KV (set the same secret on every node)`,
        ];
  }
  if (!PEER_TOKEN.test(token))
    return ['NODE_PEER_TOKEN=<secret>: must be a bearer token (letters, digits and . _ ~ + / - , then = padding), no spaces'];
  if (token.length < PEER_TOKEN_MIN_CHARS)
    return [`NODE_PEER_TOKEN=<secret>: must be at least ${PEER_TOKEN_MIN_CHARS} characters (e.g. openssl rand -hex 24)`];
  return [];
}

/**
 * Loads and validates; NODE_ID must be one NATS subject token (it names the node's subjects).
 * `catalogBase` is the engine's catalog of derived models: DroidSpeak pairs known without NODE_DROIDSPEAK_BASES.
 */
export function loadNodeManagerConfig(env: Env, catalogBase: CatalogBase = NO_CATALOG): NodeManagerConfig {
  const problems: string[] = [];
  let config: ConfigOf<typeof nodeManagerSchema> | undefined;
  try {
    config = loadConfig(nodeManagerSchema, env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.problems);
  }
  const nodeId = env.NODE_ID?.trim() || `${toSubjectToken(hostname())}-${process.pid}`;
  const advertise = env.NODE_GRPC_ADVERTISE?.trim();
  if (advertise && !parseHostPort(advertise))
    problems.push(`NODE_GRPC_ADVERTISE=${JSON.stringify(advertise)}: must be host or host:port (a peer dials it)`);
  if (!isSubjectToken(nodeId)) problems.push(`NODE_ID=${JSON.stringify(nodeId)}: must match [A-Za-z0-9_-]+ (it is part of NATS subjects)`);
  if (config) problems.push(...peerTokenProblems(config.NODE_GRPC_HOST!, config.NODE_PEER_TOKEN));
  const peerTls = config ? loadPeerTls(config) : { problems: [] };
  problems.push(...peerTls.problems);
  const kv = config ? parseKvStoreSettings({ ...config, NODE_ID: nodeId }) : { problems: [] };
  problems.push(...kv.problems);
  const budgetText = env.NODE_KV_DEVICE_BYTES?.trim();
  const kvDeviceBytes = budgetText ? parseByteSize(budgetText) : undefined;
  if (budgetText && !kvDeviceBytes)
    problems.push(`NODE_KV_DEVICE_BYTES=${JSON.stringify(budgetText)}: must be a positive size such as 256MiB`);
  const ds = config ? parseDroidSpeakSettings(config, config.NODE_MODELS ?? [], catalogBase) : { problems: [] };
  problems.push(...ds.problems);
  const simKv =
    config && isSim(env) ? parseSimKvBytes(config.NODE_SIM_KV_BYTES, config.NODE_MODELS ?? []) : { value: undefined, problems: [] };
  problems.push(...simKv.problems);
  if (problems.length > 0 || !config || !kv.settings || !ds.settings) throw new ConfigError(problems);
  return {
    ...config,
    NODE_ID: nodeId,
    kvStore: kv.settings,
    droidSpeak: ds.settings,
    ...(kvDeviceBytes ? { kvDeviceBytes } : {}),
    ...(simKv.value ? { simKvBytes: simKv.value } : {}),
    ...(peerTls.tls ? { peerTls: peerTls.tls } : {}),
  };
}
