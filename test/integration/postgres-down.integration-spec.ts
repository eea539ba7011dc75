// Issue 29 item 4: Postgres down. Only the profiler keeps state there, and it is never on the
// request path: with the test's own Postgres shut down (never the shared one), completions are
// served as before, while the profiler answers 503 `unavailable` with a clear message and
// Retry-After (REST, through the gateway, and over NATS) instead of a 500; when Postgres is back
// it answers again, its data intact.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  decodeMessage,
  encodeMessage,
  ListModelRecordsRequestSchema,
  ProfilerReplySchema,
  RegisterModelRequestSchema,
  Subjects,
} from '@mnemo/proto';
import { startProfiler, type ProfilerHandle } from '../../apps/profiler/src/app.js';
import { startPostgres } from '@mnemo/testkit';
import { Cluster, natsUrl, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const MISSING_JOB = '00000000-0000-4000-8000-000000000000';

describe('Postgres down', () => {
  let pg: Awaited<ReturnType<typeof startPostgres>>;
  let profiler: ProfilerHandle;
  let cluster: Cluster;
  let nc: NatsConnection;
  let base: string;

  const complete = async () => {
    const res = await fetch(`${base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: 'The database is down, and yet', max_tokens: 6, temperature: 0 }),
    });
    const json = (await res.json()) as { choices?: Array<{ text: string }> };
    return { status: res.status, text: json.choices?.[0]?.text };
  };
  const profilerGet = async (root: string) => {
    const res = await fetch(`${root}/v1/profiler/jobs/${MISSING_JOB}`, { signal: AbortSignal.timeout(15_000) });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      json: (await res.json()) as { error?: { code: string; message: string } },
    };
  };
  const listModels = async () =>
    decodeMessage(
      ProfilerReplySchema,
      (await nc.request(Subjects.PROFILER_MODELS_LIST, encodeMessage(ListModelRecordsRequestSchema, {}), { timeout: 15_000 })).data,
    ).result;

  beforeAll(async () => {
    pg = await startPostgres();
    profiler = await startProfiler({
      ...process.env,
      DATABASE_URL: pg.url,
      NATS_URL: natsUrl(),
      METRICS_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'error',
    });
    cluster = await Cluster.start({
      nodes: 1,
      gateway: true,
      gatewayEnv: { GATEWAY_PROFILER_URL: `http://127.0.0.1:${profiler.httpPort}` },
      nodeEnv: { NODE_ENGINE: 'sim', NODE_MODELS: MODEL },
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    nc = await connect({ servers: natsUrl() });
    const reg = decodeMessage(
      ProfilerReplySchema,
      (
        await nc.request(
          Subjects.PROFILER_MODELS_REGISTER,
          encodeMessage(RegisterModelRequestSchema, { id: 'pg-down-base', architecture: 'mnemo-llama', numLayers: 4 }),
        )
      ).data,
    );
    expect(reg.result.case).toBe('model');
  });
  afterAll(async () => {
    await nc?.drain();
    await cluster?.stop();
    await profiler?.stop();
    await pg?.stop();
  });

  it('serving is unaffected; the profiler answers 503 with a clear message until Postgres is back, then as before', async () => {
    const before = await complete();
    expect(before.status).toBe(200);
    expect((await profilerGet(`http://127.0.0.1:${profiler.httpPort}`)).status).toBe(404);

    await pg.down();
    try {
      // Serving: the same answer as before the outage.
      for (let i = 0; i < 3; i++) expect(await complete()).toEqual(before);
      for (const root of [`http://127.0.0.1:${profiler.httpPort}`, base]) {
        const r = await profilerGet(root);
        expect(r.status).toBe(503);
        expect(r.json.error).toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(/^the profiler's database is unreachable: .* until it is back/),
        });
      }
      expect((await profilerGet(`http://127.0.0.1:${profiler.httpPort}`)).retryAfter).toBe('5');
      const listed = await listModels();
      expect(listed.case).toBe('error');
      expect(listed.value).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/database is unreachable/) });
    } finally {
      await pg.up();
    }

    await waitFor(
      async () => (await profilerGet(`http://127.0.0.1:${profiler.httpPort}`)).status === 404,
      20_000,
      'the profiler answering again',
    );
    const listed = await listModels();
    expect(listed.case).toBe('models');
    expect(listed.case === 'models' && listed.value.models.map((m) => m.id)).toContain('pg-down-base');
    expect(await complete()).toEqual(before);
  });
});
