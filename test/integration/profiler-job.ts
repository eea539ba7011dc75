// Profiling a (base → derived) pair end to end for the DroidSpeak specs: register both models and
// the pair with the real profiler over NATS, run a small job over its REST API, wait for the end.
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, RegisterModelPairRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { startProfiler, type ProfilerHandle } from '../../apps/profiler/src/app.js';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { Cluster, referenceNodeEnv, type ClusterOptions } from './cluster.js';
import { KvEventLog } from './kv-events.js';

/** A profiler on free ports (the database and NATS of global-setup) that takes up a queued job within 200 ms. */
export function startJobProfiler(): Promise<ProfilerHandle> {
  return startProfiler({ ...process.env, METRICS_PORT: '0', HTTP_PORT: '0', LOG_LEVEL: 'warn', PROFILER_JOB_POLL_MS: '200' });
}

/** Registers `base`, `derived` (its fine-tune, both `layers` deep) and the pair with the profiler over NATS. */
export async function registerPair(nc: NatsConnection, base: string, derived: string, layers: number): Promise<void> {
  const reg = (init: Record<string, unknown>) =>
    nc.request(Subjects.PROFILER_MODELS_REGISTER, encodeMessage(RegisterModelRequestSchema, init));
  await reg({ id: base, architecture: 'mnemo-llama', numLayers: layers });
  await reg({ id: derived, architecture: 'mnemo-llama', numLayers: layers, baseModelId: base });
  await nc.request(Subjects.PROFILER_PAIRS_REGISTER, encodeMessage(RegisterModelPairRequestSchema, { base, derived }));
}

/** A profiling job as its status endpoint shows it. */
export interface JobStatus {
  readonly id: string;
  readonly status: string;
  readonly error: string | null;
  readonly donePatterns: number;
  readonly totalPatterns: number;
}

/**
 * Starts a job at `api` (`…/v1/profiler`: the profiler's own, or the gateway's proxy of it) and
 * polls it every 100 ms until it is done or failed; the job as last seen.
 */
export async function runProfilingJob(api: string, body: object): Promise<JobStatus> {
  const res = await fetch(`${api}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 202) throw new Error(`profiling job not started: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    const job = (await (await pollOnce(`${api}/jobs/${id}`)).json()) as Omit<JobStatus, 'id'>;
    if (job.status === 'done' || job.status === 'failed') return { ...job, id };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Registers the pair and profiles it with a small synthetic job; throws when the job fails. */
export async function profilePair(
  nc: NatsConnection,
  profilerHttpPort: number,
  base: string,
  derived: string,
  layers: number,
): Promise<void> {
  await registerPair(nc, base, derived, layers);
  const body = { base, derived, continuationTokens: 4, dataset: { kind: 'synthetic', prompts: 2, tokens: 24, seed: 5 } };
  const job = await runProfilingJob(`http://127.0.0.1:${profilerHttpPort}/v1/profiler`, body);
  if (job.status === 'failed') throw new Error(job.error ?? 'profiling job failed');
}

/**
 * One status poll. The profiler computes in the test's own process, so its event loop can stall past
 * the HTTP server's keep-alive timeout; the server then closes the idle socket just as the next poll
 * reuses it (ECONNRESET). That is the connection, not the job: poll again, a few times.
 */
async function pollOnce(url: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url);
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export interface DroidSpeakCluster {
  readonly profiler: ProfilerHandle;
  readonly cluster: Cluster;
  /** The nodes' KV events, heard from the start. */
  readonly kv: KvEventLog;
  /** The nodes named at the start, in that order. */
  readonly nodes: NodeManagerHandle[];
  /** Registers a pair with the profiler and runs a small job to the end (the scheduler hears its FrontierUpdated). */
  profile(base: string, derived: string, layers: number): Promise<void>;
  /** Stops the cluster, then the profiler. */
  stop(): Promise<void>;
}

/**
 * The DroidSpeak specs' cluster: a job profiler, and reference nodes `nodeIds` serving `base` and
 * `derived` in `kvBlocks` device blocks, KV events every 20 ms, with a 100% loss floor (the cheapest
 * profiled plan, whichever it is: these specs check the mechanism, the profiler's the quality).
 * The pair is profiled 4 layers deep before it returns.
 */
export async function startDroidSpeakCluster(opts: {
  readonly base: string;
  readonly derived: string;
  readonly kvBlocks: number;
  readonly nodeIds: readonly string[];
  readonly cluster?: Omit<ClusterOptions, 'nodes' | 'nodeEnv'>;
  /** More node environment (e.g. a batch cap, so that a busy node queues). */
  readonly nodeEnv?: Record<string, string>;
}): Promise<DroidSpeakCluster> {
  const profiler = await startJobProfiler();
  let cluster: Cluster | undefined;
  const stop = async () => {
    await cluster?.stop();
    await profiler.stop();
  };
  try {
    const nodeEnv = referenceNodeEnv(`${opts.base},${opts.derived}`, opts.kvBlocks, {
      NODE_KV_EVENTS_MS: '20',
      NODE_DROIDSPEAK_MAX_LOSS_BP: '10000',
      ...opts.nodeEnv,
    });
    const started = (cluster = await Cluster.start({ ...opts.cluster, nodes: 0, nodeEnv }));
    const kv = new KvEventLog(started.nc);
    const nodes: NodeManagerHandle[] = [];
    for (const id of opts.nodeIds) nodes.push(await started.addNode({ NODE_ID: id }));
    await started.waitForLiveNodes(nodes.length);
    const profile = (base: string, derived: string, layers: number) => profilePair(started.nc, profiler.httpPort, base, derived, layers);
    await profile(opts.base, opts.derived, 4);
    return { profiler, cluster: started, kv, nodes, profile, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
