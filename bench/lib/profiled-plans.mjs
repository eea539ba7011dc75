// The profiler-chosen DroidSpeak plans that `npm run bench -- droidspeak` leaves in
// bench/results/droidspeak.json: the node-side benchmarks run those plans.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function loadProfiledPlans(root) {
  const source = join(root, 'bench/results/droidspeak.json');
  if (!existsSync(source)) {
    console.error('needs bench/results/droidspeak.json (the profiler-chosen plans): run `npm run bench -- droidspeak` first');
    process.exit(2);
  }
  const json = JSON.parse(readFileSync(source, 'utf8'));
  // `pairs` is keyed by pair name; the node benches walk them in order (older results: an array).
  return { ...json, pairs: Array.isArray(json.pairs) ? json.pairs : Object.values(json.pairs) };
}
