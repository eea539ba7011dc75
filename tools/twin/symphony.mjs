// `npm run twin -- symphony` and `symphony-robustness`: Symphony's experiment on the twin (libs/twin
// experiments/symphony) and its ±20% rows, with a progress bar. The runs and their results are the
// library's; what it cannot import is passed in: the papers' sessions drawn by testkit's generator,
// and the paper bands registered in testkit (its figure is bench/figures/twin-symphony.figure.mjs).
// Each run is on a thread that imports this module, so the ports are bound here, where a thread can find them.
import cliProgress from 'cli-progress';
import { baseSessions, holds, PAPER_WORKLOAD, paperSessions, paperWorkloadStats, targetOf } from '@mnemo/testkit';
import {
  poolWorkers,
  SYMPHONY_RUN,
  symphonyExperimentInWorkers,
  symphonyResults,
  symphonyRobustness,
  symphonyRun as runOf,
} from '@mnemo/twin';

/** The twin's ports: the papers' base sessions at a think-time compression on a run's seed, and the `twin-symphony` targets. */
export const SYMPHONY_PORTS = {
  // Seed 1 is the workload's own draw.
  base: (thinkCompression, seed) => baseSessions({ ...PAPER_WORKLOAD, thinkCompression, seed: PAPER_WORKLOAD.seed + seed - 1 }),
  systemTokens: PAPER_WORKLOAD.systemTokens,
  holds: (path, value) => holds(value, targetOf('twin-symphony', path)),
};

/** One run on this module's ports: what each thread runs. */
export const symphonyRun = (task) => runOf(SYMPHONY_PORTS, task);

/** The threads' module and function (symphonyExperimentInWorkers). */
export const SYMPHONY_WORKER = { module: import.meta.url, fn: 'symphonyRun' };

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
  const result = await symphonyExperimentInWorkers(SYMPHONY_WORKER, { o, progress });
  bar.stop();
  // The workload's statistics at human speeds (as the papers state them); the run's compression beside them.
  const human = { ...PAPER_WORKLOAD, thinkCompression: 1 };
  const workload = paperWorkloadStats(paperSessions(human).base, human);
  return { json: symphonyResults(result, { o, workload, workers: poolWorkers() }) };
}

/** The ±20% rows (the `robustness` key of the results file); `progress(i, n, label)` is told before each run. */
export const runSymphonyRobustness = (options = {}) => symphonyRobustness(SYMPHONY_PORTS, options);
