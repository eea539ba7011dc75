// In-process Mnemo cluster for integration tests: a scheduler (or several), N node-managers and,
// on request, the gateway, all against the real NATS at NATS_URL (set by global-setup.mjs).
// Each app is started through the same `start*(env)` its main.ts uses, so tests exercise the
// production wiring. Helpers talk the NATS contract of libs/proto directly.
import { createInbox, connect, type NatsConnection } from '@nats-io/transport-node';
import {
  CancelRequestSchema,
  decodeMessage,
  encodeMessage,
  InferenceRequestSchema,
  ListModelsReplySchema,
  ListModelsRequestSchema,
  nodeCancelSubject,
  ScheduleReplySchema,
  Subjects,
  TokenEventSchema,
  type TokenEvent,
  type InferenceRequest,
} from '@mnemo/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { scrapeMetrics, selectValue } from '@mnemo/testkit';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNodeManager, type NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { startScheduler, type SchedulerHandle } from '../../apps/scheduler/src/app.js';

type Env = Record<string, string | undefined>;
export type InferenceInit = MessageInitShape<typeof InferenceRequestSchema>;

export interface ClusterOptions {
  /** Node-managers to start (default 1). */
  nodes?: number;
  /** Scheduler replicas (default 1). */
  schedulers?: number;
  schedulerEnv?: Env;
  nodeEnv?: Env;
  /** Also start the gateway (HTTP + gRPC on free ports). */
  gateway?: boolean;
  gatewayEnv?: Env;
  /** A NATS of the test's own (one it may restart); default NATS_URL from global-setup. */
  natsUrl?: string;
}

/** A cluster of `options` for one test: `fn` runs on it, and it is stopped however `fn` ends. */
export async function withCluster(options: ClusterOptions, fn: (cluster: Cluster) => Promise<void>): Promise<void> {
  const cluster = await Cluster.start(options);
  try {
    await fn(cluster);
  } finally {
    await cluster.stop();
  }
}

/**
 * A cluster for the enclosing describe block: started before its tests and stopped after them.
 * Read `cluster` and `nodes` inside tests and hooks, not while the block is being declared.
 */
export function clusterFor(options: ClusterOptions): { readonly cluster: Cluster; readonly nodes: NodeManagerHandle[] } {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await Cluster.start(options);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  return {
    get cluster() {
      return cluster!;
    },
    get nodes() {
      return cluster!.nodes;
    },
  };
}

/** The same with a gateway; `base` is the gateway's URL. */
export function gatewayCluster(options: Omit<ClusterOptions, 'gateway'>): { readonly cluster: Cluster; readonly base: string } {
  const c = clusterFor({ ...options, gateway: true });
  return {
    get cluster() {
      return c.cluster;
    },
    get base() {
      return `http://127.0.0.1:${c.cluster.gateway!.httpPort}`;
    },
  };
}

/**
 * A node on the reference engine's CPU backend serving `models` (comma-separated) in `kvBlocks`
 * device blocks (unset: the node's default), with `extra` on top.
 */
export function referenceNodeEnv(models: string, kvBlocks?: number, extra: Env = {}): Env {
  return {
    NODE_ENGINE: 'reference',
    NODE_REFERENCE_BACKEND: 'cpu',
    ...(kvBlocks === undefined ? {} : { NODE_KV_BLOCKS: String(kvBlocks) }),
    NODE_MODELS: models,
    ...extra,
  };
}

/**
 * A sim node that carries real KV bytes (`layers` x `row` floats per token, NODE_SIM_KV_BYTES), 256
 * device blocks and a 64 MiB host pool: what the peer-restore specs give every node.
 */
export function simKvNodeEnv(model: string, layers: number, row: number): Env {
  return {
    NODE_ENGINE: 'sim',
    NODE_MODELS: model,
    NODE_KV_BLOCKS: '256',
    NODE_SIM_KV_BYTES: `${layers}x${row}`,
    NODE_KV_HOST_POOL: '64MiB',
  };
}

/** Fast liveness for tests: nodes beat every 100 ms and are dropped after 1 s of silence. */
export const TEST_HEARTBEAT_MS = 100;
export const TEST_NODE_TIMEOUT_MS = 1000;

export const natsUrl = (): string => process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

let nodeCounter = 0;

export interface GatewayLike {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Ops port: /metrics, /healthz, /readyz. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

export class Cluster {
  readonly nodes: NodeManagerHandle[] = [];
  readonly schedulers: SchedulerHandle[] = [];
  gateway?: GatewayLike;
  /** Per-cluster data directory: each node keeps its SSD pool and journals under <dataDir>/<NODE_ID>. */
  readonly dataDir = mkdtempSync(join(tmpdir(), 'mnemo-itest-'));

  private constructor(
    readonly nc: NatsConnection,
    private readonly options: ClusterOptions,
  ) {}

  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const url = options.natsUrl ?? natsUrl();
    // The harness outlives a NATS restart too: it keeps reconnecting, never giving up.
    const nc = await connect({ servers: url, name: 'cluster-harness', maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    const cluster = new Cluster(nc, options);
    try {
      for (let i = 0; i < (options.schedulers ?? 1); i++) {
        cluster.schedulers.push(
          await startScheduler({
            NATS_URL: url,
            METRICS_PORT: '0',
            LOG_LEVEL: 'warn',
            SCHEDULER_NODE_TIMEOUT_MS: String(TEST_NODE_TIMEOUT_MS),
            ...options.schedulerEnv,
          }),
        );
      }
      for (let i = 0; i < (options.nodes ?? 1); i++) await cluster.addNode();
      if (options.gateway) {
        // Imported lazily so clusters without a gateway do not load its module graph.
        const { startGateway } = await import('../../apps/gateway/src/app.js');
        cluster.gateway = await startGateway({
          NATS_URL: url,
          GATEWAY_PORT: '0',
          GATEWAY_GRPC_PORT: '0',
          METRICS_PORT: '0',
          LOG_LEVEL: 'warn',
          ...options.gatewayEnv,
        });
      }
      await cluster.waitForLiveNodes(cluster.nodes.length);
      return cluster;
    } catch (e) {
      await cluster.stop();
      throw e;
    }
  }

  /** Starts one more node-manager (unique NODE_ID per process and call). */
  async addNode(env: Env = {}): Promise<NodeManagerHandle> {
    const nodeId = env.NODE_ID ?? `itest-${process.pid}-${++nodeCounter}`;
    const dataDir = join(this.dataDir, nodeId);
    const node = await startNodeManager({
      NATS_URL: this.options.natsUrl ?? natsUrl(),
      METRICS_PORT: '0',
      LOG_LEVEL: process.env.ITEST_NODE_LOG ?? 'warn',
      NODE_ID: nodeId,
      NODE_HEARTBEAT_MS: String(TEST_HEARTBEAT_MS),
      NODE_ENGINE: 'sim',
      // Small pools for tests, with configured bandwidths (no probe at start).
      NODE_DATA_DIR: dataDir,
      NODE_KV_HOST_POOL: '16MiB',
      NODE_KV_SSD_POOLS: `${join(dataDir, 'ssd-0.pool')}=64MiB`,
      NODE_KV_BANDWIDTHS: '10,2',
      ...this.options.nodeEnv,
      ...env,
    });
    this.nodes.push(node);
    return node;
  }

  /** Waits until every scheduler replica counts `n` live nodes. */
  async waitForLiveNodes(n: number, timeoutMs = 5000): Promise<void> {
    await waitFor(
      async () => {
        for (const s of this.schedulers) if ((await scrape(s.metricsPort, 'mnemo_scheduler_live_nodes')) !== n) return false;
        return true;
      },
      timeoutMs,
      `${n} live nodes in every scheduler`,
    );
  }

  /** Opens an inbox, schedules the request and returns the node id plus the event stream. */
  async infer(init: Exclude<InferenceInit, InferenceRequest> = {}, timeoutMs = 10_000): Promise<InferenceRun> {
    const replySubject = createInbox();
    const run = new InferenceRun(this.nc, replySubject, timeoutMs);
    await this.nc.flush();
    const request: InferenceInit = {
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      tenant: 'itest',
      model: 'mnemo-tiny',
      tokens: Array.from(new TextEncoder().encode('Hello, Mnemo!')),
      sampling: { temperature: 1, topP: 1, maxTokens: 8, seed: 42n },
      replySubject,
      ...init,
    };
    const reply = decodeMessage(
      ScheduleReplySchema,
      (await this.nc.request(Subjects.SCHEDULE, encodeMessage(InferenceRequestSchema, request), { timeout: 5000 })).data,
    );
    run.requestId = request.requestId!;
    if (reply.result.case === 'nodeId') run.nodeId = reply.result.value;
    else {
      run.close();
      run.error = reply.result.case === 'error' ? reply.result.value : { code: 'empty', message: 'empty reply' };
    }
    return run;
  }

  async listModels(): Promise<string[]> {
    const msg = await this.nc.request(Subjects.MODELS_LIST, encodeMessage(ListModelsRequestSchema, {}), { timeout: 5000 });
    return decodeMessage(ListModelsReplySchema, msg.data).models.map((m) => m.id);
  }

  cancel(nodeId: string, requestId: string): void {
    this.nc.publish(nodeCancelSubject(nodeId), encodeMessage(CancelRequestSchema, { requestId, reason: 'test' }));
  }

  nodeById(id: string): NodeManagerHandle {
    const n = this.nodes.find((x) => x.nodeId === id);
    if (!n) throw new Error(`no node ${id} in this cluster`);
    return n;
  }

  async stop(): Promise<void> {
    await this.gateway?.stop();
    await Promise.all(this.nodes.map((n) => n.stop()));
    await Promise.all(this.schedulers.map((s) => s.stop()));
    if (!this.nc.isClosed()) await this.nc.drain();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The TokenEvents of one request as they arrive on its inbox. */
export class InferenceRun {
  requestId = '';
  nodeId?: string;
  error?: { code: string; message: string };
  readonly events: TokenEvent[] = [];
  private readonly sub;
  private readonly waiters: Array<{ pred: (e: TokenEvent[]) => boolean; resolve: () => void }> = [];

  constructor(
    nc: NatsConnection,
    readonly subject: string,
    private readonly timeoutMs: number,
  ) {
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        this.events.push(decodeMessage(TokenEventSchema, msg.data));
        for (const w of [...this.waiters]) {
          if (w.pred(this.events)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      },
    });
  }

  /** Resolves once the predicate holds for the events so far; rejects after the run's timeout. */
  until(pred: (events: TokenEvent[]) => boolean, what = 'events'): Promise<TokenEvent[]> {
    if (pred(this.events)) return Promise.resolve(this.events);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`timed out after ${this.timeoutMs} ms waiting for ${what} of ${this.requestId} (have ${this.events.length})`)),
        this.timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.events);
        },
      });
    });
  }

  done(): Promise<TokenEvent[]> {
    return this.until((es) => es.some((e) => e.done), 'the done event');
  }

  tokens(): number[] {
    return this.events.flatMap((e) => e.tokens);
  }

  close(): void {
    this.sub.unsubscribe();
  }
}

/** Polls `pred` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Reads one sample of an ops server's /metrics by a selector, `name` or `name{some="labels"}`
 * (labels not named, e.g. service=…, are ignored; a histogram's `_count`, `_sum` and `_bucket{le}`
 * read its parts).
 */
export async function scrape(port: number, sample: string): Promise<number | undefined> {
  return selectValue(await scrapeMetrics(port, 10_000), sample);
}

/**
 * Polls a condition every `intervalMs` (25 by default); for state with no event to await (e.g. a
 * node being expired). Scraping /metrics is not free: poll it less often on busy runs.
 */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
