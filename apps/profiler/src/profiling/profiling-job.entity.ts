import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type ProfilingJobStatus = 'queued' | 'running' | 'done' | 'failed';

/** One profiling run of a pair over a dataset: table `profiling_jobs` (migration 1732400000000). */
@Entity({ name: 'profiling_jobs' })
export class ProfilingJobEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'base_model_id', type: 'text' })
  baseModelId!: string;

  @Column({ name: 'derived_model_id', type: 'text' })
  derivedModelId!: string;

  @Column({ type: 'text' })
  status!: ProfilingJobStatus;

  /** Token ids of every prompt, fixed at submission so a resumed run measures the same data. */
  @Column({ type: 'jsonb' })
  prompts!: number[][];

  @Column({ name: 'continuation_tokens', type: 'integer' })
  continuationTokens!: number;

  @Column({ name: 'total_patterns', type: 'integer' })
  totalPatterns!: number;

  @Column({ name: 'done_patterns', type: 'integer' })
  donePatterns!: number;

  /** How many times a profiler has claimed the job (> 1: it was resumed). */
  @Column({ type: 'integer' })
  runs!: number;

  /** The claiming replica renews this after every pattern; once past, any replica may resume the job. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: 'run_started_at', type: 'timestamptz', nullable: true })
  runStartedAt!: Date | null;

  /** Patterns already done when the current run started: the ETA uses this run's rate only. */
  @Column({ name: 'done_at_run_start', type: 'integer' })
  doneAtRunStart!: number;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}
