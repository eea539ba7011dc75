import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A model the profiler knows: table `models` (migration 1732300000000). */
@Entity({ name: 'models' })
export class ModelEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** Pairs are only allowed within one architecture (same layer shapes). */
  @Column({ type: 'text' })
  architecture!: string;

  @Column({ name: 'num_layers', type: 'integer' })
  numLayers!: number;

  /** The model this one was fine-tuned from, when registered as derived. */
  @Column({ name: 'base_model_id', type: 'text', nullable: true })
  baseModelId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
