import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Model registry: `models` and `model_pairs`. Constraints the use cases also check
 * (they answer with precise error codes); the database keeps them true under races.
 */
export class ModelRegistry1732300000000 implements MigrationInterface {
  name = 'ModelRegistry1732300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE models (
        id            text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 200),
        architecture  text NOT NULL CHECK (length(architecture) BETWEEN 1 AND 100),
        num_layers    integer NOT NULL CHECK (num_layers > 0),
        base_model_id text NULL REFERENCES models (id) ON DELETE RESTRICT,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (base_model_id IS NULL OR base_model_id <> id)
      )`);
    await q.query(`
      CREATE TABLE model_pairs (
        base_model_id    text NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        derived_model_id text NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        created_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (base_model_id, derived_model_id),
        CHECK (base_model_id <> derived_model_id)
      )`);
    await q.query(`CREATE INDEX model_pairs_derived_idx ON model_pairs (derived_model_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE model_pairs`);
    await q.query(`DROP TABLE models`);
  }
}
