import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { DataSource, Repository } from 'typeorm';
import { bothFrontiers, patternGrid, patternKey } from '@mnemo/kv-core';
import { JsonLogger } from '@mnemo/service-kit';
import { PATTERN_RESULT_REPOSITORY, PROFILING_JOB_REPOSITORY } from '../database/database.module.js';
import { DATA_SOURCE } from '../database/data-source.js';
import { isDatabaseUnreachable } from '../database/pg-error.codes.js';
import { FrontierPublisher } from './frontier.publisher.js';
import { toProfiledPattern } from './frontier-point.mapper.js';
import { PAIR_EVALUATOR, type PairEvaluatorPort, type PairSession } from './pair-evaluator.port.js';
import { PatternResultEntity } from './pattern-result.entity.js';
import { ProfilingJobEntity } from './profiling-job.entity.js';
import { ProfilingMetrics } from './profiling.metrics.js';
import { RUNNER_OPTIONS, type RunnerOptions } from './profiling.tokens.js';

/**
 * Runs profiling jobs one at a time in the background. A job is claimed with a lease in
 * Postgres (one replica runs it), every measured pattern is stored before the next starts
 * and renews the lease, and patterns already stored are skipped: a job survives a restart
 * (graceful: the lease is released at once; a crash: after the lease lapses) and resumes
 * where it stopped. When the grid is done the frontier is stored and announced.
 */
@Injectable()
export class ProfilingJobRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private active: Promise<void> | null = null;
  private stopping = false;
  private databaseDown = false;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(PROFILING_JOB_REPOSITORY) private readonly jobs: Repository<ProfilingJobEntity>,
    @Inject(PATTERN_RESULT_REPOSITORY) private readonly results: Repository<PatternResultEntity>,
    @Inject(PAIR_EVALUATOR) private readonly evaluator: PairEvaluatorPort,
    @Inject(FrontierPublisher) private readonly publisher: FrontierPublisher,
    @Inject(RUNNER_OPTIONS) private readonly opts: RunnerOptions,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(ProfilingMetrics) private readonly metrics: ProfilingMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), this.opts.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for work now (a job was just queued); a no-op while a job runs. */
  kick(): void {
    if (this.active || this.stopping) return;
    this.active = this.drain()
      .then(() => {
        if (this.databaseDown) this.logger.emit('info', 'database reachable again: profiling jobs resume');
        this.databaseDown = false;
      })
      .catch((e: unknown) => {
        // An outage is reported once, not at every poll; jobs resume from their saved progress when it ends.
        if (!isDatabaseUnreachable(e)) this.logger.emit('error', 'profiling runner failed', { err: String((e as Error)?.stack ?? e) });
        else if (!this.databaseDown)
          this.logger.emit('warn', 'database unreachable: profiling jobs wait until it is back', {
            err: String((e as Error)?.message ?? e),
          });
        this.databaseDown ||= isDatabaseUnreachable(e);
      })
      .finally(() => (this.active = null));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.active;
  }

  private async drain(): Promise<void> {
    while (!this.stopping) {
      const job = await this.claim();
      if (!job) return;
      await this.run(job);
    }
  }

  /** Takes the oldest queued job, or a running one whose lease lapsed, atomically across replicas. */
  private async claim(): Promise<ProfilingJobEntity | null> {
    const rows = (await this.ds.query(
      `UPDATE profiling_jobs SET status = 'running', runs = runs + 1, run_started_at = now(), done_at_run_start = done_patterns,
              lease_until = now() + $1 * interval '1 millisecond'
        WHERE id = (SELECT id FROM profiling_jobs
                     WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
                     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [this.opts.leaseMs],
    )) as [Array<{ id: string }>, number] | Array<{ id: string }>;
    const list = Array.isArray(rows[0]) ? (rows[0] as Array<{ id: string }>) : (rows as Array<{ id: string }>);
    if (list.length === 0) return null;
    return this.jobs.findOneBy({ id: list[0]!.id });
  }

  private async run(job: ProfilingJobEntity): Promise<void> {
    const log = { jobId: job.id, base: job.baseModelId, derived: job.derivedModelId, run: job.runs, done: job.donePatterns };
    this.logger.emit('info', job.runs > 1 ? 'profiling job resumed' : 'profiling job started', log);
    let session: PairSession | undefined;
    try {
      const maxPrompt = Math.max(...job.prompts.map((p) => p.length));
      session = await this.evaluator.open(job.baseModelId, job.derivedModelId, job.continuationTokens, maxPrompt);
      const done = new Set(
        (await this.results.find({ where: { jobId: job.id }, select: { r1: true, u1: true, r2: true } })).map((r) => patternKey(r)),
      );
      const todo = patternGrid(session.layers).filter((p) => !done.has(patternKey(p)));
      if (todo.length > 0) await session.prepare(job.prompts);
      for (const pattern of todo) {
        if (this.stopping) {
          await this.jobs.update({ id: job.id }, { leaseUntil: null });
          this.metrics.jobs.inc({ outcome: 'paused' });
          this.logger.emit('info', 'profiling job paused for shutdown', { ...log, done: await this.count(job.id) });
          return;
        }
        const end = this.metrics.patternSeconds.startTimer();
        const m = await session.evaluate(pattern);
        end();
        await this.results
          .createQueryBuilder()
          .insert()
          .values({
            jobId: job.id,
            ...pattern,
            top1Agreement: m.top1Agreement,
            meanKl: m.meanKl,
            taskLoss: m.taskLoss,
            recomputedLayers: m.recomputedLayers,
            eCacheBytesPerToken: m.eCacheBytesPerToken,
            prefillMs: m.prefillMs,
            fullPrefillMs: m.fullPrefillMs,
          })
          .orIgnore()
          .execute();
        await this.ds.query(
          `UPDATE profiling_jobs SET done_patterns = (SELECT count(*) FROM pattern_results ` +
            `WHERE job_id = $1), lease_until = now() + $2 * interval '1 millisecond' WHERE id = $1`,
          [job.id, this.opts.leaseMs],
        );
        this.metrics.patterns.inc();
      }
      await this.finish(job);
    } catch (e) {
      this.logger.emit('error', 'profiling job failed', { ...log, err: String((e as Error)?.stack ?? e) });
      await this.jobs.update(
        { id: job.id },
        { status: 'failed', error: String((e as Error)?.message ?? e).slice(0, 2000), leaseUntil: null, finishedAt: new Date() },
      );
      this.metrics.jobs.inc({ outcome: 'failed' });
    } finally {
      await session?.close();
    }
  }

  private async count(jobId: string): Promise<number> {
    return this.results.countBy({ jobId });
  }

  /** Frontier of every stored result, upserted as the pair's latest, then announced. */
  private async finish(job: ProfilingJobEntity): Promise<void> {
    const rows = await this.results.findBy({ jobId: job.id });
    // Both metrics' frontiers: a plan can then be chosen under whichever quality metric the pair is set to.
    const frontier = bothFrontiers(rows.map(toProfiledPattern));
    const fullPrefillMs = rows.reduce((s, r) => s + r.fullPrefillMs, 0) / rows.length;
    const layers = Math.max(...rows.map((r) => r.r2));
    await this.ds.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO pair_frontiers (base_model_id, derived_model_id, job_id, points, num_layers, full_prefill_ms, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, now())
         ON CONFLICT (base_model_id, derived_model_id) DO UPDATE
           SET job_id = EXCLUDED.job_id, points = EXCLUDED.points, num_layers = EXCLUDED.num_layers,
               full_prefill_ms = EXCLUDED.full_prefill_ms, created_at = now()`,
        [job.baseModelId, job.derivedModelId, job.id, JSON.stringify(frontier), layers, fullPrefillMs],
      );
      await tx.query(
        `UPDATE profiling_jobs SET status = 'done', done_patterns = $2, lease_until = NULL, finished_at = now() WHERE id = $1`,
        [job.id, rows.length],
      );
    });
    this.publisher.publish(job.baseModelId, job.derivedModelId, job.id, frontier);
    this.metrics.jobs.inc({ outcome: 'done' });
    this.logger.emit('info', 'profiling job done', {
      jobId: job.id,
      patterns: rows.length,
      frontier: frontier.map((p) => patternKey(p.pattern)),
    });
  }
}
