// Scratch folders for specs that write model or tokenizer files, and the tiny models the
// per-architecture specs run (one Llama, one Qwen2, one Qwen3).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The catalog's tiny model of each architecture the engine implements. */
export const TINY_PER_ARCHITECTURE = ['mnemo-tiny', 'mnemo-tiny-qwen2', 'mnemo-tiny-qwen3'];

/**
 * A scratch folder under the OS temp folder for the calling describe, fresh for each test
 * (`each`) or shared by all of them (`all`), removed after; the getter names the current one.
 */
export function scratchDir(prefix: string, scope: 'each' | 'all' = 'each'): () => string {
  let dir = '';
  const make = () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  };
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (scope === 'each') {
    beforeEach(make);
    afterEach(remove);
  } else {
    beforeAll(make);
    afterAll(remove);
  }
  return () => dir;
}
