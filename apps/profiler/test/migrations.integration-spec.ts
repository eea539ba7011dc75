import pg from 'pg';
import { ListModelRecordsRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { bootProfiler, ProfilerTestClient, uniqueId } from './profiler-test.client.js';

describe('profiler migrations', () => {
  const appliedCount = async (): Promise<number> => {
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const r = await db.query(`SELECT count(*)::int AS n FROM profiler_migrations WHERE name = 'ModelRegistry1732300000000'`);
      return r.rows[0].n;
    } finally {
      await db.end();
    }
  };

  it('apply once and keep data across restarts, also when replicas start together', async () => {
    const id = uniqueId('persisted');
    const first = await bootProfiler();
    const client = await ProfilerTestClient.connect();
    try {
      await client.request(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, { id, architecture: 'llama', numLayers: 2 });
      await first.stop();

      // Two replicas racing on start must both come up (advisory lock around migrations).
      const [a, b] = await Promise.all([bootProfiler(), bootProfiler()]);
      const listed = await client.request(Subjects.PROFILER_MODELS_LIST, ListModelRecordsRequestSchema, {});
      await Promise.all([a.stop(), b.stop()]);

      expect(listed.case === 'models' && listed.value.models.map((m) => m.id)).toContain(id);
      expect(await appliedCount()).toBe(1);
    } finally {
      await first.stop();
      await client.close();
    }
  });
});
