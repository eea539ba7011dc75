import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `pattern_results.task_loss`: the relative increase of the derived model's held-out loss under
 * the pattern (the task quality metric beside top-1 agreement). NULL for rows measured before it.
 */
export class PatternTaskLoss1764400000000 implements MigrationInterface {
  name = 'PatternTaskLoss1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE pattern_results ADD COLUMN task_loss double precision NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE pattern_results DROP COLUMN task_loss`);
  }
}
