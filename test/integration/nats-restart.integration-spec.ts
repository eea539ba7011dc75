// Issue 29 item 4: NATS restarted under load. The test runs its own nats-server (never the shared
// one) with a gateway, a scheduler and two sim nodes on it, streams greedy completions, and kills
// NATS (SIGKILL, as a crash) while they are mid-stream, keeping it down longer than the
// scheduler's node timeout. Every request must end within its deadline — with the same text as
// an undisturbed run (no token lost or repeated) or with a clear error — no request may run twice
// on the nodes (but for failovers), services reconnect by themselves, and the scheduler rebuilds
// its KV directory from the nodes' reports.
import { Cluster, scrape, TEST_NODE_TIMEOUT_MS, waitFor } from './cluster.js';
import { counter, scrapeMetrics, sseData, startNats } from '@mnemo/testkit';

const MODEL = 'mnemo-tiny';
const MAX_TOKENS = 200;
const REQUEST_TIMEOUT_MS = 20_000;
const DOWN_MS = TEST_NODE_TIMEOUT_MS + 1500;
/** ~600 byte-tokens each: two whole chunks per prompt, so the KV directory has something to rebuild. */
const prompts = Array.from({ length: 6 }, (_, i) =>
  `Request ${i}: ${'the journal keeps what the store acknowledged, and a restart must not lose it. '.repeat(8)}`.slice(0, 600),
);

/** Aborted in afterAll: no request of this suite outlives its cluster (a failed assertion leaves probes behind). */
const leftovers = new AbortController();

interface Outcome {
  status: number;
  text: string;
  finish?: string;
  /** An error event in the stream, or the error body. */
  error?: { code?: string; message?: string };
  done: boolean;
  ms: number;
}

/** A streamed greedy completion read chunk by chunk; `started` resolves at its first text. */
function streamCompletion(base: string, prompt: string, maxTokens = MAX_TOKENS): { started: Promise<void>; outcome: Promise<Outcome> } {
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  const outcome = (async (): Promise<Outcome> => {
    const t0 = Date.now();
    const res = await fetch(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt, max_tokens: maxTokens, temperature: 0, stream: true }),
      signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS + 10_000), leftovers.signal]),
    });
    const out: Outcome = { status: res.status, text: '', done: false, ms: 0 };
    if (res.status !== 200) {
      out.error = ((await res.json()) as { error?: Outcome['error'] }).error;
      markStarted();
      out.ms = Date.now() - t0;
      return out;
    }
    for await (const data of sseData(res.body!)) {
      if (data === '[DONE]') {
        out.done = true;
        continue;
      }
      const chunk = JSON.parse(data) as { error?: Outcome['error']; choices?: Array<{ text?: string; finish_reason?: string | null }> };
      if (chunk.error) out.error = chunk.error;
      for (const c of chunk.choices ?? []) {
        if (c.text) {
          out.text += c.text;
          markStarted();
        }
        if (c.finish_reason) out.finish = c.finish_reason;
      }
    }
    markStarted();
    out.ms = Date.now() - t0;
    return out;
  })();
  return { started, outcome };
}

/** Sum of every sample of `name` (all label sets, or those with `labels`) on an ops port. */
async function sum(port: number, name: string, labels: Record<string, string> = {}): Promise<number> {
  return counter(await scrapeMetrics(port, 10_000), name, labels);
}

describe('NATS restarted under load', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let cluster: Cluster;
  let base: string;
  const reference = new Map<string, string>();
  let recovery: Promise<number> | undefined;

  beforeAll(async () => {
    nats = await startNats();
    cluster = await Cluster.start({
      natsUrl: nats.url,
      nodes: 2,
      gateway: true,
      gatewayEnv: { GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), GATEWAY_IDLE_TIMEOUT_MS: '6000' },
      // 30 ms a decode step: a 60-token answer takes about 2 s, long enough to be cut by the restart.
      nodeEnv: {
        NODE_ENGINE: 'sim',
        NODE_MODELS: MODEL,
        NODE_KV_BLOCKS: '512',
        NODE_SIM_DECODE_STEP_MS: '30',
        NODE_SIM_KV_BYTES: '8x16',
        NODE_KV_HOST_POOL: '64MiB',
      },
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    // Undisturbed answers first (greedy: the text depends on the prompt alone).
    for (const p of prompts) {
      const o = await streamCompletion(base, p).outcome;
      expect(o).toMatchObject({ status: 200, done: true, finish: 'length' });
      reference.set(p, o.text);
    }
  });
  afterAll(async () => {
    leftovers.abort();
    await recovery?.catch(() => undefined);
    await cluster?.stop();
    await nats?.stop();
  });

  it(
    'in-flight streams finish with the undisturbed text or fail clearly within ' +
      'their deadline; none runs twice; services reconnect; the directory is rebuilt',
    async () => {
      const scheduler = cluster.schedulers[0]!;
      const executedBefore = (
        await Promise.all(cluster.nodes.map((n) => sum(n.metricsPort, 'mnemo_requests_total', { operation: 'infer' })))
      ).reduce((a, b) => a + b, 0);
      const holdingsBefore = (await scrape(scheduler.metricsPort, 'mnemo_scheduler_kv_directory_holdings'))!;
      expect(holdingsBefore).toBeGreaterThanOrEqual(2 * prompts.length);
      const reportsBefore = await sum(scheduler.metricsPort, 'mnemo_scheduler_kv_reports_requested_total');

      const runs = prompts.map((p) => ({ prompt: p, ...streamCompletion(base, p) }));
      await Promise.all(runs.map((r) => r.started));
      const restarted = Date.now();
      await nats.restart(DOWN_MS);
      // A request sent just after NATS is back, while services are still reconnecting.
      const late = { prompt: prompts[0]!, ...streamCompletion(base, prompts[0]!) };
      // Meanwhile, how soon new requests are served again: a probe every 250 ms (none waits for the
      // one before), until one sent has been served; recovery is when the first such was sent.
      recovery = (async () => {
        const probes: Array<Promise<number | undefined>> = [];
        let served = false;
        while (!served && probes.length < 40) {
          const sentAt = Date.now();
          probes.push(
            // Short probes (greedy: their text starts the undisturbed one), so they never queue behind each other.
            streamCompletion(base, prompts[1]!, 4).outcome.then(
              (o) => {
                const ok =
                  o.status === 200 &&
                  !o.error &&
                  o.finish === 'length' &&
                  o.text.length > 0 &&
                  reference.get(prompts[1]!)!.startsWith(o.text);
                served ||= ok;
                if (process.env.ITEST_VERBOSE)
                  process.stderr.write(`probe sent at +${sentAt - restarted} ms: ${ok ? 'served' : JSON.stringify(o.error ?? o.status)}\n`);
                return ok ? (sentAt - restarted) / 1000 : undefined;
              },
              () => undefined,
            ),
          );
          await new Promise((r) => setTimeout(r, 250));
        }
        const times = (await Promise.all(probes)).filter((t): t is number => t !== undefined);
        if (times.length === 0) throw new Error('not serving 30 s after the restart');
        return Math.min(...times);
      })();
      const outcomes = await Promise.all([...runs, late].map(async (r) => ({ prompt: r.prompt, ...(await r.outcome) })));

      for (const o of outcomes) {
        // Within its deadline, whichever way it ended.
        expect(o.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 5_000);
        if (o.status === 200 && !o.error) {
          expect(o).toMatchObject({ done: true, finish: 'length' });
          expect(o.text).toBe(reference.get(o.prompt));
        } else {
          // A clear error that says what happened, never a hang, a cut stream or a wrong answer
          // (while no node is registered yet the model is not "unknown": that is a 503 to retry).
          expect(['data_loss', 'timeout', 'no_node_available']).toContain(o.error?.code);
          expect(o.error?.message).toEqual(expect.any(String));
        }
      }
      // NATS is at most once: token events a node published while it was cut off may reach the
      // gateway's inbox before the gateway has resubscribed, and are gone. The gateway sees the gap
      // at the attempt's next event and continues the request from what it streamed (failover), so
      // in-flight streams finish with the undisturbed text; one whose every later event was lost
      // ends with a clear timeout (GATEWAY_IDLE_TIMEOUT_MS), never with wrong or repeated text.
      const completed = outcomes.filter((o) => o.status === 200 && !o.error).length;
      process.stderr.write(
        `[nats-restart] ${completed}/${outcomes.length} completed with the undisturbed text; failed: ` +
          `${JSON.stringify(outcomes.filter((o) => o.status !== 200 || o.error).map((o) => o.error?.code))}\n`,
      );
      // Most of the streams cut mid-way finish (a loaded machine may delay a continuation past its deadline).
      expect(completed).toBeGreaterThanOrEqual(prompts.length / 2);

      // Services reconnected by themselves: new requests are served.
      const recoveredS = await recovery!;
      process.stderr.write(`[nats-restart] serving again ${recoveredS.toFixed(1)} s after the kill (down ${DOWN_MS} ms)\n`);
      expect(recoveredS).toBeLessThan(DOWN_MS / 1000 + 15);

      // No request ran twice: the nodes ran no more requests than were sent since (recovery probes
      // included), and at least every one that was answered.
      await cluster.waitForLiveNodes(2, 10_000);
      const sent = (await sum(cluster.gateway!.metricsPort, 'mnemo_requests_total')) - prompts.length;
      const executed =
        (await Promise.all(cluster.nodes.map((n) => sum(n.metricsPort, 'mnemo_requests_total', { operation: 'infer' })))).reduce(
          (a, b) => a + b,
          0,
        ) - executedBefore;
      // A failed-over request legitimately runs again elsewhere (its first run cancelled).
      const failovers = await sum(cluster.gateway!.metricsPort, 'mnemo_gateway_failovers_total');
      process.stderr.write(`[nats-restart] sent ${sent}, run on nodes ${executed}, failovers ${failovers}\n`);
      expect(executed).toBeLessThanOrEqual(sent + failovers);
      expect(executed).toBeGreaterThanOrEqual(completed + 1);

      // The scheduler dropped the silent nodes and rebuilt their KV from full reports when they came back.
      expect(await sum(scheduler.metricsPort, 'mnemo_scheduler_nodes_dropped_total')).toBeGreaterThan(0);
      await waitFor(
        async () => (await scrape(scheduler.metricsPort, 'mnemo_scheduler_kv_directory_holdings'))! >= holdingsBefore,
        10_000,
        'the KV directory rebuilt',
      );
      expect(await sum(scheduler.metricsPort, 'mnemo_scheduler_kv_reports_requested_total')).toBeGreaterThan(reportsBefore);
    },
  );
});
