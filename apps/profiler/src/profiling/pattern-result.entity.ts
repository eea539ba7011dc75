import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** Quality and cost of one reuse pattern in one job: table `pattern_results`. */
@Entity({ name: 'pattern_results' })
export class PatternResultEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'integer' })
  r1!: number;

  @PrimaryColumn({ type: 'integer' })
  u1!: number;

  @PrimaryColumn({ type: 'integer' })
  r2!: number;

  @Column({ name: 'top1_agreement', type: 'double precision' })
  top1Agreement!: number;

  @Column({ name: 'mean_kl', type: 'double precision' })
  meanKl!: number;

  /** Relative increase of the derived model's held-out loss under the pattern; null for rows measured before it was. */
  @Column({ name: 'task_loss', type: 'double precision', nullable: true })
  taskLoss!: number | null;

  @Column({ name: 'recomputed_layers', type: 'integer' })
  recomputedLayers!: number;

  @Column({ name: 'e_cache_bytes_per_token', type: 'integer' })
  eCacheBytesPerToken!: number;

  @Column({ name: 'prefill_ms', type: 'double precision' })
  prefillMs!: number;

  @Column({ name: 'full_prefill_ms', type: 'double precision' })
  fullPrefillMs!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
