// Profiling a (base → derived) pair end to end for the DroidSpeak specs: register both models and
// the pair with the real profiler over NATS, run a small job over its REST API, wait for the end.
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, RegisterModelPairRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { startProfiler, type ProfilerHandle } from '../../apps/profiler/src/app.js';

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

export async function profilePair(
  nc: NatsConnection,
  profilerHttpPort: number,
  base: string,
  derived: string,
  layers: number,
): Promise<void> {
  await registerPair(nc, base, derived, layers);
  const api = `http://127.0.0.1:${profilerHttpPort}`;
  const res = await fetch(`${api}/v1/profiler/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ base, derived, continuationTokens: 4, dataset: { kind: 'synthetic', prompts: 2, tokens: 24, seed: 5 } }),
  });
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    const j = (await (await pollOnce(`${api}/v1/profiler/jobs/${id}`)).json()) as { status: string; error: string | null };
    if (j.status === 'done') return;
    if (j.status === 'failed') throw new Error(j.error ?? 'profiling job failed');
    await new Promise((r) => setTimeout(r, 100));
  }
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
