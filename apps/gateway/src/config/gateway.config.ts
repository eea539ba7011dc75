import type { RateLimit } from '@mnemo/kv-core';
import { ConfigError, commonSchema, loadConfig, opsSchema, type ConfigOf, type NatsCredentials, type Schema } from '@mnemo/service-kit';

/** The model trained in tools/train that a new user talks to; `mnemo-tiny` stays for tests. */
export const DEFAULT_MODEL = 'fortune-base';
const MAX_MODEL_ID = 256;

/** The gateway's environment (docs/DEVELOPMENT.md lists the shared table). */
export const gatewaySchema = {
  ...commonSchema,
  ...opsSchema,
  // The ops port: /metrics, /healthz, /readyz are not on the public REST port (they need no API key, and tell a lot).
  METRICS_PORT: {
    type: 'int',
    doc: 'ops port: HTTP /metrics, /healthz, /readyz, apart from the public REST port (0 = any free port)',
    default: 9401,
    min: 0,
    max: 65535,
  },
  GATEWAY_HOST: { type: 'string', doc: 'REST bind address', default: '127.0.0.1' },
  // 0 picks a free port: the in-process integration harness relies on it.
  GATEWAY_PORT: { type: 'int', doc: 'REST port (0 = any free port)', default: 8080, min: 0, max: 65535 },
  GATEWAY_GRPC_PORT: { type: 'int', doc: 'gRPC Infer port (0 = any free port)', default: 50051, min: 0, max: 65535 },
  MNEMO_API_KEYS: { type: 'list', doc: 'comma-separated API keys; unset = no auth', secret: true },
  MNEMO_ADMIN_KEYS: {
    type: 'list',
    doc:
      'comma-separated admin keys (header x-admin-key): GET /v1/requests/{id}/kv ' +
      'then explains misses caused by tenant isolation and answers for any tenant',
    secret: true,
  },
  GATEWAY_MAX_PROMPT_TOKENS: { type: 'int', doc: 'longer prompts are rejected with 400', default: 8192, min: 1 },
  GATEWAY_REQUEST_TIMEOUT_MS: { type: 'int', doc: 'whole-request timeout', default: 120_000, min: 1 },
  GATEWAY_IDLE_TIMEOUT_MS: {
    type: 'int',
    doc: 'longest wait for the next token event from the node before the request fails with a timeout',
    default: 60_000,
    min: 1,
  },
  GATEWAY_MAX_BODY_BYTES: { type: 'int', doc: 'larger request bodies get 413', default: 2 * 1024 * 1024, min: 1024 },
  GATEWAY_STREAM_BUFFER_EVENTS: {
    type: 'int',
    doc:
      'token events buffered per request for a slow client; the node is paused at ' +
      'a quarter, resumed at a sixteenth, and the request given up when it is full',
    default: 256,
    min: 8,
    max: 65_536,
  },
  GATEWAY_STALL_TIMEOUT_MS: {
    type: 'int',
    doc: 'how long a client may keep its request paused (not reading) before the request is cancelled and its connection closed',
    default: 30_000,
    min: 1,
  },
  GATEWAY_FAILOVER_RETRIES: {
    type: 'int',
    doc:
      'times one request may move to another node after its node went down (NODE_DOWN), ' +
      'continuing its stream token-exactly; past it the request fails with no_node_available',
    default: 2,
    min: 0,
    max: 10,
  },
  GATEWAY_PROFILER_URL: {
    type: 'url',
    doc: "base URL of the profiler's REST API, which /v1/profiler/… is proxied to",
    default: 'http://127.0.0.1:8090',
    protocols: ['http', 'https'],
  },
  GATEWAY_PROFILER_TIMEOUT_MS: {
    type: 'int',
    doc: 'longest wait for the profiler to answer a proxied request (504 after)',
    default: 10_000,
    min: 1,
  },
  GATEWAY_ADVISORY_RATE: {
    type: 'int',
    doc:
      'advisories (POST /v1/advisories, gRPC Advise) each tenant may send per second, on average; more ' +
      'get 429 with Retry-After (each advisory makes nodes pull KV, so a flood would cost every tenant)',
    default: 50,
    min: 1,
  },
  GATEWAY_ADVISORY_BURST: {
    type: 'int',
    doc: 'advisories a tenant may send at once above GATEWAY_ADVISORY_RATE (its token bucket size)',
    default: 100,
    min: 1,
  },
  GATEWAY_WHY_RATE: {
    type: 'int',
    doc: '`why` lookups (GET /v1/requests/{id}/kv) each tenant may make per second, on average; more get 429 with Retry-After',
    default: 10,
    min: 1,
  },
  GATEWAY_WHY_BURST: { type: 'int', doc: '`why` lookups a tenant may make at once above GATEWAY_WHY_RATE', default: 20, min: 1 },
  MNEMO_DEFAULT_MODEL: {
    type: 'string',
    doc: 'the model GET /v1/models lists first (the one to talk to); `npm start` serves it on every node',
    default: DEFAULT_MODEL,
  },
} as const satisfies Schema;

type Raw = ConfigOf<typeof gatewaySchema>;

export interface GatewayConfig {
  readonly natsUrl: string;
  readonly natsCredentials: NatsCredentials;
  /** Ops listener (/metrics, /healthz, /readyz). */
  readonly opsHost: string;
  readonly opsPort: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly host: string;
  readonly port: number;
  readonly grpcPort: number;
  /** Empty = authentication off (every request is tenant `default`). */
  readonly apiKeys: readonly string[];
  /** Keys of the `x-admin-key` header (why answers that reveal other tenants). */
  readonly adminKeys: readonly string[];
  readonly maxPromptTokens: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly streamBufferEvents: number;
  readonly stallTimeoutMs: number;
  /** Continuations allowed per request after node deaths (kv-core planContinuation). */
  readonly failoverRetries: number;
  /** Base URL of the profiler's REST API, without a trailing slash. */
  readonly profilerUrl: string;
  readonly profilerTimeoutMs: number;
  /** Listed first by GET /v1/models. */
  readonly defaultModel: string;
  /** Per-tenant token bucket of advisories. */
  readonly advisoryLimit: RateLimit;
  /** Per-tenant token bucket of `why` lookups. */
  readonly whyLimit: RateLimit;
}

/** Throws `ConfigError` listing every problem (bootOrExit prints them and exits 1). */
export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const c: Raw = loadConfig(gatewaySchema, env);
  const defaultModel = c.MNEMO_DEFAULT_MODEL!;
  // A model id is what a node registers: a catalog id or a model directory's name.
  if (defaultModel.length > MAX_MODEL_ID || /[\s/\\\p{Cc}]/u.test(defaultModel)) {
    throw new ConfigError([
      `MNEMO_DEFAULT_MODEL=${JSON.stringify(defaultModel)}: must be a model id (1 to ${MAX_MODEL_ID} characters, no spaces or slashes)`,
    ]);
  }
  // Defaults make every field but the list defined once loadConfig returned.
  return {
    natsUrl: c.NATS_URL!,
    natsCredentials: {
      ...(c.NATS_USER ? { user: c.NATS_USER } : {}),
      ...(c.NATS_PASSWORD ? { password: c.NATS_PASSWORD } : {}),
      ...(c.NATS_TLS_CA ? { tlsCa: c.NATS_TLS_CA } : {}),
    },
    opsHost: c.METRICS_HOST!,
    opsPort: c.METRICS_PORT!,
    logLevel: c.LOG_LEVEL as GatewayConfig['logLevel'],
    host: c.GATEWAY_HOST!,
    port: c.GATEWAY_PORT!,
    grpcPort: c.GATEWAY_GRPC_PORT!,
    apiKeys: c.MNEMO_API_KEYS ?? [],
    adminKeys: c.MNEMO_ADMIN_KEYS ?? [],
    maxPromptTokens: c.GATEWAY_MAX_PROMPT_TOKENS!,
    requestTimeoutMs: c.GATEWAY_REQUEST_TIMEOUT_MS!,
    idleTimeoutMs: c.GATEWAY_IDLE_TIMEOUT_MS!,
    maxBodyBytes: c.GATEWAY_MAX_BODY_BYTES!,
    streamBufferEvents: c.GATEWAY_STREAM_BUFFER_EVENTS!,
    stallTimeoutMs: c.GATEWAY_STALL_TIMEOUT_MS!,
    failoverRetries: c.GATEWAY_FAILOVER_RETRIES!,
    profilerUrl: c.GATEWAY_PROFILER_URL!.replace(/\/+$/, ''),
    profilerTimeoutMs: c.GATEWAY_PROFILER_TIMEOUT_MS!,
    advisoryLimit: { ratePerSec: c.GATEWAY_ADVISORY_RATE!, burst: c.GATEWAY_ADVISORY_BURST! },
    whyLimit: { ratePerSec: c.GATEWAY_WHY_RATE!, burst: c.GATEWAY_WHY_BURST! },
    defaultModel,
  };
}

/** DI token for {@link GatewayConfig}. */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
