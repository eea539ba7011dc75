import { Column, Entity } from 'typeorm';
import type { ProfiledPattern } from '@mnemo/kv-core';
import { PairKeyedRow } from '../pairs/model-pair.entity.js';

/** The latest Pareto frontier of a pair (cheapest first): table `pair_frontiers`, what the plan service answers from. */
@Entity({ name: 'pair_frontiers' })
export class PairFrontierEntity extends PairKeyedRow {
  @Column({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @Column({ type: 'jsonb' })
  points!: ProfiledPattern[];

  @Column({ name: 'num_layers', type: 'integer' })
  numLayers!: number;

  @Column({ name: 'full_prefill_ms', type: 'double precision' })
  fullPrefillMs!: number;
}
