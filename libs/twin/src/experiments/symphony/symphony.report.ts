// The Symphony experiment's results file (bench/results/twin-symphony.json, drawn by
// bench/figures/twin-symphony.figure.mjs) from one experiment's result.
import type { PaperWorkloadStats } from '../shared/paper-workload.js';
import { symphonyBaselineChecks, symphonyCauses, symphonyHardware } from './symphony.checks.js';
import type { SymphonyResult } from './symphony.experiment.js';
import { SYMPHONY_PAPER, SYMPHONY_RUN, type SymphonySetup } from './symphony.setup.js';

const SYSTEMS =
  'kv-core SERVING_SYSTEMS: symphony (routing with advisories, prefetch, peer fetch), vllm-paper (vLLM as the paper ran it: ' +
  'no prefix cache, every turn recomputed; the headlines divide by it), recompute (vLLM at its best: behind a least-loaded ' +
  'balancer with its device prefix cache, hits by chance), infercept (sticky, KV offloaded to host between turns and restored ' +
  'over PCIe), llmd (prefix + queue + KV-utilisation scorers), conductor (Mooncake Algorithm 1: queue + transfer + prefill, ' +
  'the threshold from conductor_sweep)';

/**
 * The results file's figures: `workload` is the generated workload's statistics at human speeds
 * (testkit's fit, which the twin may not import), `workers` the threads the runs took.
 */
export function symphonyResults(
  result: SymphonyResult,
  { o = SYMPHONY_RUN, workload, workers }: { o?: SymphonySetup; workload: PaperWorkloadStats; workers: number },
) {
  return {
    symphony: result.keys,
    baseline_check: symphonyBaselineChecks(result.curves, o),
    disagreement_causes: symphonyCauses({ symphony: result.keys, curves: result.curves, setup: { run: o } }),
    paper: SYMPHONY_PAPER,
    setup: {
      run: o,
      hardware: symphonyHardware(),
      workload: { ...workload, think_compression: o.thinkCompression },
      systems: SYSTEMS,
      measured:
        `requests sent after ${o.warmMs / 1000} s of ${o.untilMs / 1000} simulated s` +
        (o.windowUsers !== undefined
          ? `, the window after ${o.warmMs / 1000} s stretched ×${o.windowUsers} ÷ users below ${o.windowUsers} users`
          : ''),
    },
    // Conductor's threshold, swept on another seed; the best value runs in every conductor run (and the live multiround).
    conductor_sweep: result.conductor_sweep,
    curves: result.curves,
    experiment_wall_s: result.wall_s,
    workers,
  };
}

export type SymphonyResults = ReturnType<typeof symphonyResults>;
