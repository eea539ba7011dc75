import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * DroidSpeak profiling: jobs (with a lease so exactly one replica runs each, and a
 * restarted profiler picks it up again), one row per profiled pattern (the resume point:
 * a pattern with a row is never measured twice), and the latest frontier per pair.
 */
export class ProfilingJobs1732400000000 implements MigrationInterface {
  name = 'ProfilingJobs1732400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE profiling_jobs (
        id                  uuid PRIMARY KEY,
        base_model_id       text NOT NULL,
        derived_model_id    text NOT NULL,
        status              text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        prompts             jsonb NOT NULL,
        continuation_tokens integer NOT NULL CHECK (continuation_tokens > 0),
        total_patterns      integer NOT NULL CHECK (total_patterns > 0),
        done_patterns       integer NOT NULL DEFAULT 0 CHECK (done_patterns >= 0),
        runs                integer NOT NULL DEFAULT 0,
        lease_until         timestamptz NULL,
        run_started_at      timestamptz NULL,
        done_at_run_start   integer NOT NULL DEFAULT 0,
        error               text NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        finished_at         timestamptz NULL,
        FOREIGN KEY (base_model_id, derived_model_id) REFERENCES model_pairs (base_model_id, derived_model_id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX profiling_jobs_pending_idx ON profiling_jobs (created_at) WHERE status IN ('queued', 'running')`);
    await q.query(`
      CREATE TABLE pattern_results (
        job_id                  uuid NOT NULL REFERENCES profiling_jobs (id) ON DELETE CASCADE,
        r1                      integer NOT NULL,
        u1                      integer NOT NULL,
        r2                      integer NOT NULL,
        top1_agreement          double precision NOT NULL CHECK (top1_agreement BETWEEN 0 AND 1),
        mean_kl                 double precision NOT NULL CHECK (mean_kl >= 0),
        recomputed_layers       integer NOT NULL,
        e_cache_bytes_per_token integer NOT NULL,
        prefill_ms              double precision NOT NULL,
        full_prefill_ms         double precision NOT NULL,
        created_at              timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (job_id, r1, u1, r2),
        CHECK (0 <= r1 AND r1 <= u1 AND u1 <= r2)
      )`);
    await q.query(`
      CREATE TABLE pair_frontiers (
        base_model_id    text NOT NULL,
        derived_model_id text NOT NULL,
        job_id           uuid NOT NULL REFERENCES profiling_jobs (id) ON DELETE CASCADE,
        points           jsonb NOT NULL,
        num_layers       integer NOT NULL,
        full_prefill_ms  double precision NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (base_model_id, derived_model_id),
        FOREIGN KEY (base_model_id, derived_model_id) REFERENCES model_pairs (base_model_id, derived_model_id) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pair_frontiers`);
    await q.query(`DROP TABLE pattern_results`);
    await q.query(`DROP TABLE profiling_jobs`);
  }
}
