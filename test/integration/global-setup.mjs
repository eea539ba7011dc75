// Integration tests talk to real NATS and Postgres. NATS_URL / DATABASE_URL point at
// servers you already run; when unset, private ones are started here on free ports
// (@mnemo/testkit) and their URLs exported so every test file (in band or in workers,
// which are spawned after this runs) sees them.
//
// Schema: the profiler applies its TypeORM migrations itself at start (under a Postgres
// advisory lock, so concurrent starts are safe), and its specs start it. That keeps one
// code path for tests and production, and avoids loading TypeScript migrations from this
// untransformed .mjs file.
//
// Jest loads this file natively, without its module map, so '@mnemo/testkit' would be
// libs/testkit/dist as it is: loadTestkit() compiles it first (a fresh clone has no dist, and
// an edit to the infra would otherwise be tested stale).
import { loadTestkit } from '../../scripts/testkit.mjs';

export default async function globalSetup() {
  const { redactUrl, startNats, startPostgres } = await loadTestkit();
  /** @type {Array<{ stop: () => Promise<void> }>} */
  const started = [];
  globalThis.__mnemoInfra = started;
  try {
    if (!process.env.NATS_URL) {
      const nats = await startNats();
      started.push(nats);
      process.env.NATS_URL = nats.url;
    }
    if (!process.env.DATABASE_URL) {
      const pg = await startPostgres();
      started.push(pg);
      process.env.DATABASE_URL = pg.url;
    }
  } catch (e) {
    for (const s of started.reverse()) await s.stop();
    throw e;
  }
  process.stderr.write(
    `\n[integration] NATS ${process.env.NATS_URL}, Postgres ${redactUrl(process.env.DATABASE_URL)}${started.length ? ' (private, started for this run)' : ''}\n`,
  );
}
