import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A base → derived pair whose KV caches may be reused across (DroidSpeak): table
 * `model_pairs`, unique per (base, derived), both ends foreign keys to `models`.
 */
@Entity({ name: 'model_pairs' })
export class ModelPairEntity {
  @PrimaryColumn({ name: 'base_model_id', type: 'text' })
  baseModelId!: string;

  @PrimaryColumn({ name: 'derived_model_id', type: 'text' })
  derivedModelId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
