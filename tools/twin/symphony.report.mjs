// The Symphony experiment's results file, with a progress bar while it runs (its figure is
// bench/figures/twin-symphony.figure.mjs, rendered from the file).
import cliProgress from 'cli-progress';
import { poolWorkers } from './run-pool.mjs';
import {
  paperWorkloadStats,
  SYMPHONY_PAPER,
  SYMPHONY_RUN,
  symphonyBaselineChecks,
  symphonyCauses,
  symphonyExperimentInWorkers,
  symphonyHardware,
} from './symphony.mjs';
import { PAPER_WORKLOAD, paperSessions } from './paper-workload.mjs';

export async function runSymphony({ o = SYMPHONY_RUN } = {}) {
  // Without a terminal (a log file), the bar prints a line every 30 s instead of redrawing.
  const bar = new cliProgress.SingleBar(
    {
      format: 'symphony |{bar}| {value}/{total} runs · {label} · {duration_formatted}',
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 30_000,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const progress = (i, n, label) => {
    if (!started) bar.start(n, 0, { label });
    started = true;
    bar.update(i, { label });
  };
  const result = await symphonyExperimentInWorkers({ o, progress });
  bar.stop();
  // The workload's statistics at human speeds (as the papers state them); the run's compression beside them.
  const human = { ...PAPER_WORKLOAD, thinkCompression: 1 };
  const json = {
    symphony: result.keys,
    baseline_check: symphonyBaselineChecks(result.curves, o),
    disagreement_causes: symphonyCauses({ symphony: result.keys, curves: result.curves, setup: { run: o } }),
    paper: SYMPHONY_PAPER,
    setup: {
      run: o,
      hardware: symphonyHardware(),
      workload: { ...paperWorkloadStats(paperSessions(human).base, human), think_compression: o.thinkCompression },
      systems:
        'kv-core SERVING_SYSTEMS: symphony (routing with advisories, prefetch, peer fetch), vllm-paper (vLLM as the paper ran it: no prefix cache, every turn recomputed; the headlines divide by it), recompute (vLLM at its best: behind a least-loaded balancer with its device prefix cache, hits by chance), infercept (sticky, KV offloaded to host between turns and restored over PCIe), llmd (prefix + queue + KV-utilisation scorers), conductor (Mooncake Algorithm 1: queue + transfer + prefill, the threshold from conductor_sweep)',
      measured: `requests sent after ${o.warmMs / 1000} s of ${o.untilMs / 1000} simulated s`,
    },
    // Conductor's threshold, swept on another seed; the best value runs in every conductor run (and the live multiround).
    conductor_sweep: result.conductor_sweep,
    curves: result.curves,
    experiment_wall_s: result.wall_s,
    workers: poolWorkers(),
  };
  return { json };
}
