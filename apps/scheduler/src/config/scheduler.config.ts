import { CHUNK_TOKENS, DEFAULT_ROUTING_COSTS, ROUTING_POLICIES, type RoutingCosts } from '@mnemo/kv-core';
import { commonSchema, ConfigError, opsSchema, loadConfig, type ConfigOf, type Schema } from '@mnemo/service-kit';
import { parseDerivedBases } from '../droidspeak/derived-pairs.registry.js';
import { parseVllmSources } from '../interop/vllm-sources.parser.js';

/** The scheduler's environment (docs/DEVELOPMENT.md); validated once at boot, every problem listed. */
export const schedulerSchema = {
  ...commonSchema,
  ...opsSchema,
  METRICS_PORT: { type: 'int', doc: 'HTTP port of /metrics, /healthz, /readyz (0 = any free port)', default: 9402, min: 0, max: 65535 },
  SCHEDULER_NODE_TIMEOUT_MS: {
    type: 'int',
    doc:
      'a node is dropped, and announced down to gateways (NODE_DOWN), after ' +
      'this long without a heartbeat (three of the nodes’ default 500 ms beats)',
    default: 1500,
    min: 100,
  },
  SCHEDULER_DISPATCH_TIMEOUT_MS: {
    type: 'int',
    doc: 'how long a node may take to admit a dispatched request before the next node is tried',
    default: 2000,
    min: 50,
  },
  SCHEDULER_KV_DIRECTORY_MAX_HOLDINGS: {
    type: 'int',
    doc: 'bound of the KV directory in (chunk key, node) pairs; the least recently used keys are forgotten past it (~200 B each)',
    default: 1_000_000,
    min: 1,
  },
  SCHEDULER_EXPECTED_HOLDINGS_MAX: {
    type: 'int',
    doc:
      'bound of the expected holdings in (key, node) pairs: what was just routed ' +
      'where, before the node reports it; the oldest are forgotten past it; 0 = off',
    default: 100_000,
    min: 0,
  },
  SCHEDULER_EXPECTED_HOLDINGS_TTL_MS: {
    type: 'int',
    doc: "how long an expected holding counts unless the node's KV events confirm or remove it first, ms",
    default: 30_000,
    min: 1,
  },
  SCHEDULER_POLICY: {
    type: 'enum',
    doc:
      'routing policy: symphony (load + reservations + cost of moving vs recomputing a prefix), ' +
      'recompute (least loaded, KV ignored), sticky (a session stays on its node), prefix-affinity ' +
      '(longest cached prefix wins, load breaks ties), llmd (llm-d default scorers: prefix cache 3, ' +
      'queue 2, KV utilization 2), conductor (Mooncake Algorithm 1: least queue + transfer + prefill)',
    values: ROUTING_POLICIES,
    default: 'symphony',
  },
  SCHEDULER_PEER_FETCH: {
    type: 'enum',
    doc: 'on: nodes can pull a prefix from a peer (symphony weighs that and passes kv_sources); off: a prefix a node lacks is recomputed',
    values: ['on', 'off'],
    default: 'on',
  },
  SCHEDULER_MEASURED_COSTS: {
    type: 'enum',
    doc:
      'on: each node is priced with the costs it measured of itself and reports in its heartbeats (prefill, restore per tier, ' +
      'peer pull), the SCHEDULER_*_US figures standing in until it has; off: the configured figures for every node',
    values: ['on', 'off'],
    default: 'on',
  },
  SCHEDULER_PREFILL_US_PER_TOKEN: {
    type: 'int',
    doc: 'symphony cost model: prefill time per prompt token, µs (recomputing a 256-token chunk costs 256×)',
    default: 62,
    min: 1,
  },
  SCHEDULER_HOST_LOAD_US_PER_CHUNK: {
    type: 'int',
    doc: "symphony cost model: loading one 256-token chunk from a node's host pool onto its device, µs",
    default: 1400,
    min: 0,
  },
  SCHEDULER_SSD_LOAD_US_PER_CHUNK: {
    type: 'int',
    doc: "symphony cost model: loading one chunk from a node's SSD pool onto its device, µs",
    default: 5500,
    min: 0,
  },
  SCHEDULER_PEER_US_PER_CHUNK: {
    type: 'int',
    doc: "symphony cost model: pulling one chunk from a peer over the network, on top of the peer's tier read, µs",
    default: 2700,
    min: 0,
  },
  SCHEDULER_QUEUE_MS_PER_REQUEST: {
    type: 'int',
    doc: 'symphony cost model: what one request ahead in a node queue adds to time to first token, ms',
    default: 25,
    min: 1,
  },
  SCHEDULER_MOVE_MARGIN_MS: {
    type: 'int',
    doc:
      'symphony: a session leaves its live home only when another node is estimated faster by more ' +
      'than this, ms (about one queued request: load snapshots are noisy, moves are not free)',
    default: 25,
    min: 0,
  },
  SCHEDULER_CONDUCTOR_THRESHOLD_PCT: {
    type: 'int',
    doc: "conductor: fetch a peer's longer prefix when it is more than this % of the node's own (200 = twice as long)",
    default: 200,
    min: 100,
  },
  SCHEDULER_ADVISORY_TTL_MS: {
    type: 'int',
    doc: 'an advisory reservation lives this long past its expected arrival (or past now when none is given)',
    default: 30_000,
    min: 100,
  },
  SCHEDULER_ADVISORY_OVERDUE_MS: {
    type: 'int',
    doc:
      'a reservation stops counting as coming load this long past its expected arrival (a ' +
      'spurious advisory must not steer real requests); it is still honoured until it expires',
    default: 5000,
    min: 0,
  },
  SCHEDULER_ADVISORY_MAX_AHEAD_MS: {
    type: 'int',
    doc: 'expected arrivals further ahead than this are clamped to it',
    default: 300_000,
    min: 0,
  },
  SCHEDULER_ADVISORIES_PER_TENANT: { type: 'int', doc: 'live advisories one tenant may hold; more get 429', default: 1000, min: 1 },
  SCHEDULER_ADVISORIES_MAX: { type: 'int', doc: 'live advisories in all; more get 429', default: 100_000, min: 1 },
  SCHEDULER_PREFETCH_TIMEOUT_MS: {
    type: 'int',
    doc: 'how long a node may take to accept a prefetch request (it is never waited for by the client)',
    default: 1000,
    min: 10,
  },
  SCHEDULER_DROIDSPEAK_BASES: {
    type: 'list',
    doc:
      "DroidSpeak: derived=base pairs whose derived requests are routed on the base's KV when " +
      'it reaches further (pairs the profiler publishes a frontier for are learned anyway)',
  },
  SCHEDULER_MAX_SESSIONS: {
    type: 'int',
    doc: 'sessions remembered (last node, chunk keys); least recently used forgotten past it',
    default: 100_000,
    min: 1,
  },
  SCHEDULER_WHY_RECORDS: {
    type: 'int',
    doc: 'requests whose routing record is kept for `why` (GET /v1/requests/{id}/kv); the oldest go first',
    default: 10_000,
    min: 1,
  },
  SCHEDULER_WHY_TTL_MS: {
    type: 'int',
    doc: 'how long routing records and the content index are kept for `why`',
    default: 3_600_000,
    min: 1000,
  },
  SCHEDULER_WHY_CONTENT_KEYS: {
    type: 'int',
    doc: 'prompt chunks in the content index (which tenants sent the same tokens) for explaining tenant-isolation misses',
    default: 200_000,
    min: 1,
  },
  SCHEDULER_INDEXER: {
    type: 'enum',
    doc: "KV indexer HTTP API (Mooncake Conductor's POST /query and /query_by_hash) over this scheduler's KV directory",
    values: ['on', 'off'],
    default: 'off',
  },
  SCHEDULER_INDEXER_HOST: {
    type: 'string',
    doc: 'bind address of the indexer API (an operator API: keep it internal)',
    default: '127.0.0.1',
  },
  SCHEDULER_INDEXER_PORT: { type: 'int', doc: 'port of the indexer API (0 = any free port)', default: 9480, min: 0, max: 65535 },
  SCHEDULER_INDEXER_ADMIN_KEYS: {
    type: 'list',
    doc:
      'comma-separated admin keys of the indexer API (Authorization: Bearer <key>), required with SCHEDULER_INDEXER=on: ' +
      'an admin may query any tenant and /query_by_hash',
    secret: true,
  },
  MNEMO_API_KEYS: {
    type: 'list',
    doc:
      "the gateway's API keys: with one, the indexer's POST /query answers for that key's tenant only " +
      '(the tenant comes from the key, never the body)',
    secret: true,
  },
  SCHEDULER_VLLM_SOURCES: {
    type: 'string',
    doc:
      'external engines whose vLLM-format KV events (ZMQ) feed the KV directory: entries ' +
      "id=model@tcp://host:5557[|tcp://host:5558] separated by ';' (the second endpoint answers replays)",
  },
  SCHEDULER_VLLM_TENANT: {
    type: 'string',
    doc: "tenant (chunk-key salt) the external engines' KV counts for; the gateway's tenant without API keys is default",
    default: 'default',
  },
} as const satisfies Schema;

export type SchedulerConfig = ConfigOf<typeof schedulerSchema>;

/** Injection token of the validated configuration. */
export const SCHEDULER_CONFIG = Symbol('SCHEDULER_CONFIG');

export function loadSchedulerConfig(env: Readonly<Record<string, string | undefined>>): SchedulerConfig {
  const config = loadConfig(schedulerSchema, env);
  const { problems } = parseDerivedBases(config.SCHEDULER_DROIDSPEAK_BASES ?? []);
  problems.push(...parseVllmSources(config.SCHEDULER_VLLM_SOURCES ?? '').problems);
  if (config.SCHEDULER_INDEXER === 'on' && (config.SCHEDULER_INDEXER_ADMIN_KEYS ?? []).length === 0)
    problems.push(
      'SCHEDULER_INDEXER=on needs SCHEDULER_INDEXER_ADMIN_KEYS: the indexer API shows which prompts are cached, so it is never open',
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** The symphony policy's cost model from the configuration (defaults: kv-core's, one H100 and 100 Gb/s). */
export function routingCosts(config: SchedulerConfig): RoutingCosts {
  return {
    ...DEFAULT_ROUTING_COSTS,
    queueMsPerRequest: config.SCHEDULER_QUEUE_MS_PER_REQUEST!,
    moveMarginMs: config.SCHEDULER_MOVE_MARGIN_MS!,
    conductorThreshold: config.SCHEDULER_CONDUCTOR_THRESHOLD_PCT! / 100,
    recomputeMsPerChunk: (config.SCHEDULER_PREFILL_US_PER_TOKEN! * CHUNK_TOKENS) / 1000,
    loadMsPerChunk: {
      device: 0,
      host: config.SCHEDULER_HOST_LOAD_US_PER_CHUNK! / 1000,
      ssd: config.SCHEDULER_SSD_LOAD_US_PER_CHUNK! / 1000,
    },
    peerMsPerChunk: config.SCHEDULER_PEER_FETCH === 'off' ? Infinity : config.SCHEDULER_PEER_US_PER_CHUNK! / 1000,
  };
}
