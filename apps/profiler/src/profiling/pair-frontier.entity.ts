import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { ProfiledPattern } from '@mnemo/kv-core';

/** The latest Pareto frontier of a pair (cheapest first): table `pair_frontiers`, what the plan service answers from. */
@Entity({ name: 'pair_frontiers' })
export class PairFrontierEntity {
  @PrimaryColumn({ name: 'base_model_id', type: 'text' })
  baseModelId!: string;

  @PrimaryColumn({ name: 'derived_model_id', type: 'text' })
  derivedModelId!: string;

  @Column({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @Column({ type: 'jsonb' })
  points!: ProfiledPattern[];

  @Column({ name: 'num_layers', type: 'integer' })
  numLayers!: number;

  @Column({ name: 'full_prefill_ms', type: 'double precision' })
  fullPrefillMs!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
