import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The columns of a table with one row per base → derived pair: the pair is its primary key. */
export abstract class PairKeyedRow {
  @PrimaryColumn({ name: 'base_model_id', type: 'text' })
  baseModelId!: string;

  @PrimaryColumn({ name: 'derived_model_id', type: 'text' })
  derivedModelId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/**
 * A base → derived pair whose KV caches may be reused across (DroidSpeak): table
 * `model_pairs`, unique per (base, derived), both ends foreign keys to `models`.
 */
@Entity({ name: 'model_pairs' })
export class ModelPairEntity extends PairKeyedRow {}
