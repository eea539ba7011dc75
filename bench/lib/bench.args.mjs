// What every bench takes from where it lives and from its command line: the repository root (its
// results go under bench/results there) and `--quick`. Flags with a value: testkit's `arg`.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `--quick`: a short run, for a smoke test; never the figures a results file keeps. */
export const quick = process.argv.includes('--quick');
