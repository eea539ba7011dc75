import { hostname } from 'node:os';
import { SWAP_IN_MODES } from '@mnemo/kv-core';
import { isSubjectToken, toSubjectToken } from '@mnemo/proto';
import { commonSchema, opsSchema, ConfigError, loadConfig, type ConfigOf, type Schema } from '@mnemo/service-kit';
import { parseHostPort } from '../chunks/advertised.address.js';
import { loadPeerTls, type PeerTls } from '../chunks/peer.tls.js';
import { parseByteSize, parseKvStoreSettings, type KvStoreSettings } from '../kv-store/kv-store.settings.js';
import { parseDroidSpeakSettings, type DroidSpeakSettings } from '../droidspeak/droidspeak.settings.js';
import { parseSimKvBytes, type SimKvBytes } from '../engine/sim-kv.settings.js';

type Env = Readonly<Record<string, string | undefined>>;
// The reference engine (a real transformer) is the default; the sim engine is for cluster-scale runs.
const isSim = (env: Env) => env.NODE_ENGINE?.trim() === 'sim';
const isReference = (env: Env) => (env.NODE_ENGINE?.trim() || 'reference') === 'reference';

/** The node-manager's environment (docs/DEVELOPMENT.md); validated once at boot, every problem listed. */
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
  NODE_SIM_DECODE_STEP_MS: { type: 'int', doc: 'sim engine: fixed cost of one decode step (ms)', default: 2, min: 0, when: isSim },
  NODE_SIM_PREFILL_TOKEN_US: { type: 'int', doc: 'sim engine: prefill cost per prompt token (µs)', default: 10, min: 0, when: isSim },
  NODE_SIM_DECODE_SEQ_US: { type: 'int', doc: 'sim engine: decode cost per sequence in the batch (µs)', default: 250, min: 0, when: isSim },
  NODE_SIM_DECODE_KCONTEXT_US: {
    type: 'int',
    doc: 'sim engine: decode cost per 1000 context tokens in the batch (µs)',
    default: 50,
    min: 0,
    when: isSim,
  },
  NODE_SIM_PREFILL_KCONTEXT_US: {
    type: 'int',
    doc: 'sim engine: prefill attention per computed token per 1000 tokens of context before it (µs; 0: prefill linear in its tokens)',
    default: 0,
    min: 0,
    when: isSim,
  },
  NODE_SIM_RESTORE_US_PER_CHUNK: {
    type: 'int',
    doc:
      'sim engine with KV bytes: modelled host → device (PCIe) copy of one restored 256-token chunk (µs); ' +
      "a restore's layers arrive no sooner than this link carries them (0: only the real copy's time)",
    default: 0,
    min: 0,
    when: isSim,
  },
  NODE_SIM_EOS_PER_MILLE: {
    type: 'int',
    doc: 'sim engine: chance per token (‰) that EOS is sampled',
    default: 0,
    min: 0,
    max: 1000,
    when: isSim,
  },
  NODE_SIM_KV_BYTES: {
    type: 'list',
    doc:
      'sim engine: real KV bytes (the node then runs its KV store, serves and pulls chunks like a reference node): off, ' +
      '<layers>x<rowElems> for every model, or model=<layers>x<rowElems> entries (float32 rows of kv_heads·head_dim)',
    default: ['off'],
    when: isSim,
  },
  NODE_SIM_MAX_CONTEXT: {
    type: 'int',
    doc: 'sim engine: context length of every model (default: the catalog’s, 4096)',
    min: 2,
    max: 1 << 20,
    when: isSim,
  },
  NODE_REFERENCE_BACKEND: {
    type: 'enum',
    doc: 'reference engine: kernel backend',
    values: ['cpu', 'cuda'],
    default: 'cpu',
    when: isReference,
  },
  NODE_SCHEDULING: {
    type: 'enum',
    doc:
      'iteration planning: fcfs (priority then arrival, preempt only for memory) or ' +
      'priority (FastSwitch: the best-ranked that fit run, others are preempted; ranks age)',
    values: ['fcfs', 'priority'],
    default: 'fcfs',
  },
  NODE_PRIORITY_UPDATE_EVERY: {
    type: 'int',
    doc: 'priority scheduling: iterations between rank updates',
    default: 4,
    min: 1,
    max: 1_000_000,
  },
  NODE_FAIRNESS_AGING_ITERATIONS: {
    type: 'int',
    doc: 'priority scheduling: iterations a left-out sequence waits per priority level gained (0: no aging)',
    default: 32,
    min: 0,
  },
  NODE_FAIRNESS_TOKENS_PER_LEVEL: {
    type: 'int',
    doc: 'priority scheduling: tokens served per priority level lost (0: no token-count fairness)',
    default: 0,
    min: 0,
  },
  NODE_PREEMPTION: {
    type: 'enum',
    doc:
      'how a preempted sequence keeps its KV: swap (copied to host memory ' +
      'and back; reference engine on cpu, else recompute) or recompute',
    values: ['swap', 'recompute'],
    default: 'swap',
  },
  NODE_SWAP_IN: {
    type: 'enum',
    doc:
      'swap preemption: adaptive (asynchronous when a copy would stall an iteration with others to run, ' +
      'FastSwitch Algorithm 1), sync (always wait) or async (never wait while others run; for experiments)',
    values: SWAP_IN_MODES,
    default: 'adaptive',
  },
  NODE_SWAP_SPACE_MB: { type: 'int', doc: 'swap preemption: host memory for swapped-out KV per model (MiB)', default: 256, min: 1 },
  NODE_BLOCK_GROUP_BLOCKS: {
    type: 'int',
    doc: "swap preemption: blocks of a sequence's first block group (0: no block groups)",
    default: 60,
    min: 0,
    max: 1 << 20,
  },
  NODE_KV_BLOCKS: {
    type: 'int',
    doc: 'device KV blocks (16 tokens) per model; the sim engine models this capacity',
    default: 1024,
    min: 1,
  },
  NODE_KV_DEVICE_BYTES: {
    type: 'string',
    doc:
      'one device KV budget (512MiB, 2GiB, …) shared by all NODE_MODELS, split into ' +
      'elastic regions of whole minimum elastic units; replaces NODE_KV_BLOCKS when set',
  },
  NODE_KV_ELASTIC: {
    type: 'enum',
    doc:
      'with NODE_KV_DEVICE_BYTES and several models: on — idle models lend whole elastic units of their ' +
      'region to the one whose demand exceeds its own (SwiftCache); off — regions stay as split at start',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_KV_LAYER_STREAM: {
    type: 'enum',
    doc:
      "reference engine: on — a request whose context does not fit its model's " +
      'device KV cache (after elastic borrowing) is served through the layer stream ' +
      "cache (a window of layers resident, the rest streamed from the cache's free " +
      'blocks and host memory), one per model at a time; off — it is refused with 400',
    values: ['on', 'off'],
    default: 'on',
    when: isReference,
  },
  NODE_KV_STREAM_WINDOW: {
    type: 'int',
    doc: 'layer stream: resident layer planes (the active layer and those being loaded); at most the layers of every served model',
    default: 2,
    min: 2,
    max: 1024,
    when: isReference,
  },
  NODE_KV_STREAM_HOST_MB: {
    type: 'int',
    doc: 'layer stream: host memory per model for the KV of a streamed context the device cannot back (MiB; 0: device only)',
    default: 64,
    min: 0,
    max: 1 << 20,
    when: isReference,
  },
  NODE_KV_ELASTIC_WINDOW_MS: {
    type: 'int',
    doc: 'a model keeps room for the largest demand it saw this long ago (Algorithm 1 scale-down window)',
    default: 60_000,
    min: 1,
  },
  NODE_KV_ELASTIC_SESSION_WINDOW_MS: {
    type: 'int',
    doc:
      "a session served this long ago still counts as its model's elastic demand, with the KV it held (capped by " +
      'NODE_PREFIX_CACHE_BLOCKS; none with NODE_PREFIX_CACHE=off): its next turn will want it on the device; 0 — live requests alone',
    default: 60_000,
    min: 0,
  },
  NODE_KV_ELASTIC_TICK_MS: { type: 'int', doc: 'how often idle units are lent and refused reclaims retried', default: 1000, min: 10 },
  NODE_PREFIX_CACHE: {
    type: 'enum',
    doc:
      'device prefix cache: on (requests of one tenant share cached KV blocks), or ' +
      'off (every request recomputes its prompt; the offload tiers get nothing)',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_PREFIX_CACHE_BLOCKS: {
    type: 'int',
    doc:
      'most cached (reusable, unreferenced) KV blocks each model keeps on the device; ' +
      'older ones are evicted to the offload tiers as they are released (0: a ' +
      'finished request keeps nothing on the device — its next turn restores from the ' +
      'tiers, InferCept-style; default: unbounded, kept until the space is needed)',
    min: 0,
  },
  NODE_KV_WARM: {
    type: 'enum',
    doc:
      'KV store: on — a request starts reading the SSD part of its cached prefix into the host pool ' +
      'as it arrives, so the reads land while it waits for its pass; off — when its pass starts',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DATA_DIR: {
    type: 'string',
    doc: 'where the node keeps its SSD pool files and journals (default .mnemo/nodes/<NODE_ID> under the working directory)',
  },
  NODE_KV_STORE: {
    type: 'enum',
    doc: 'the tiered KV store (host pool + SSD pool behind the device cache): on or off',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_KV_HOST_POOL: {
    type: 'string',
    doc: 'host-memory pool size (512MiB, 2GiB, …), 0 for none, or auto: a quarter of free memory, at most 1GiB',
    default: 'auto',
  },
  NODE_KV_HOST_DEVICES: {
    type: 'int',
    doc: 'host pool devices (memory regions) the host pool is split into, e.g. one per NUMA node',
    default: 1,
    min: 1,
    max: 64,
  },
  NODE_KV_SSD_POOLS: {
    type: 'list',
    doc: 'SSD pool devices: path[=size] each (a preallocated file or a raw block device), or none (default: <data dir>/ssd-0.pool=1GiB)',
  },
  NODE_KV_BANDWIDTHS: { type: 'list', doc: 'GB/s of each pool device, host devices first then SSD pools (default: measured at start)' },
  NODE_KV_SSD_TTL_MS: { type: 'int', doc: 'chunks unused this long leave the SSD pool', default: 86_400_000, min: 1000 },
  NODE_KV_SSD_QUEUE_MB: {
    type: 'int',
    doc:
      'bound of the SSD write-behind queue (MiB of pinned host segments and payloads waiting for ' +
      'their SSD write); past it a chunk is kept in the faster tiers only, or recomputed later',
    default: 256,
    min: 1,
  },
  NODE_KV_IO_BACKEND: {
    type: 'enum',
    doc: 'SSD I/O: auto (io_uring when available, else pread) or pread',
    values: ['auto', 'pread'],
    default: 'auto',
  },
  NODE_PREFETCH_TTL_MS: {
    type: 'int',
    doc: 'advisory prefetch: how long prefetched chunks are held for an advisory that names no expiry (and at most 10× this)',
    default: 60_000,
    min: 100,
  },
  NODE_PREFETCH_PROMOTE: {
    type: 'enum',
    doc:
      'advisory prefetch: on — a prefetched chunk also goes to the device while it has free blocks (never evicting ' +
      'for it), so its request finds a device hit; off — it waits in the host pool and the request restores it',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_PREFETCH_MAX_ADVISORIES: {
    type: 'int',
    doc: 'advisory prefetch: advisories held at once; more are refused as overloaded (a flood cannot starve real work)',
    default: 1024,
    min: 1,
  },
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
  NODE_DROIDSPEAK: {
    type: 'enum',
    doc:
      "cross-model KV reuse (DroidSpeak): on — a derived model's request whose prompt its base model holds more of reuses " +
      "the base's KV under the profiler's plan (an approximation, reported in usage.kv_reuse); off — ordinary prefill",
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DROIDSPEAK_MAX_LOSS_BP: {
    type: 'int',
    doc: 'DroidSpeak: quality floor, the largest top-1 loss a plan may have, in basis points (100 = 1%)',
    default: 100,
    min: 0,
    max: 10_000,
  },
  NODE_DROIDSPEAK_LATENCY_BUDGET_MS: {
    type: 'int',
    doc:
      'DroidSpeak: latency budget from admission (a TTFT SLO) for the plan choice, the ' +
      'wait since admission charged against it (0: the cheapest plan within the floor)',
    default: 0,
    min: 0,
  },
  NODE_DROIDSPEAK_PLAN_TIMEOUT_MS: {
    type: 'int',
    doc: 'DroidSpeak: how long a frontier fetch from the profiler may take (never on the request path)',
    default: 2000,
    min: 10,
  },
  NODE_DROIDSPEAK_E_CACHE: {
    type: 'enum',
    doc:
      "DroidSpeak: on — base models' E caches at their pairs' transition layers are kept in the KV tiers (host " +
      'and SSD pools, shared with the KV) and served to peers; off — none kept (plans needing one run widened)',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DROIDSPEAK_BASES: {
    type: 'list',
    doc: "DroidSpeak: extra derived=base pairs (model directories); the synthetic catalog's derived models know their base",
  },
  NODE_DROIDSPEAK_QUALITY_METRICS: {
    type: 'list',
    doc:
      'DroidSpeak: per pair, derived=top1|task, the metric the floor holds on: top1 (default) — 1 − top-1 agreement with the ' +
      "derived model's own prediction; task — the relative increase of its held-out loss on its own domain (docs/droidspeak.md)",
  },
  NODE_KV_EVENTS_MS: {
    type: 'int',
    doc: 'KV events (what the node holds, per tier) are batched and published this often',
    default: 100,
    min: 10,
  },
  NODE_WHY_RECORDS: {
    type: 'int',
    doc: 'requests whose KV record (where each prompt chunk came from) is kept for `why`; the oldest go first',
    default: 10_000,
    min: 1,
  },
  NODE_WHY_TTL_MS: {
    type: 'int',
    doc: "how long a request record and a dropped chunk's reason are kept for `why`",
    default: 3_600_000,
    min: 1000,
  },
  NODE_WHY_DROPS: {
    type: 'int',
    doc: 'dropped chunk keys whose reason (evicted, expired, corrupt) is kept for `why`',
    default: 200_000,
    min: 1,
  },
  NODE_VLLM_EVENTS: {
    type: 'string',
    doc:
      'vLLM-format KV events (ZMQ PUB, msgpack EventBatch) for routers ' +
      "that speak vLLM's: an endpoint to bind such as tcp://*:5557, or off",
    default: 'off',
  },
  NODE_VLLM_EVENTS_REPLAY: {
    type: 'string',
    doc: 'vLLM-format KV events: ROUTER endpoint answering replay requests such as tcp://*:5558, or off',
    default: 'off',
  },
  NODE_VLLM_EVENTS_TOKEN_IDS: {
    type: 'enum',
    doc:
      "vLLM-format KV events: on sends each block's token_ids (every tenant's prompt tokens, in clear, to every subscriber); " +
      'off sends token_ids: [] and only salted block hashes',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_VLLM_EVENTS_TOPIC: { type: 'string', doc: "vLLM-format KV events: first frame of every message (vLLM's topic; default empty)" },
  NODE_VLLM_EVENTS_MAX_CHUNKS: {
    type: 'int',
    doc: 'vLLM-format KV events: chunks whose tokens and block hashes are remembered to describe them as vLLM blocks (≈1.2 KiB each)',
    default: 32768,
    min: 1,
  },
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

/** Loads and validates; NODE_ID must be one NATS subject token (it names the node's subjects). */
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

export function loadNodeManagerConfig(env: Env): NodeManagerConfig {
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
  const ds = config ? parseDroidSpeakSettings(config, config.NODE_MODELS ?? []) : { problems: [] };
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
