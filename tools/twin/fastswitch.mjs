// `npm run twin -- fastswitch [--no-robustness]`: FastSwitch's experiment on the twin (libs/twin
// experiments/fastswitch) and its ±20% rows, with a progress bar. The runs and their results are the
// library's; what it cannot import is passed in: FastSwitch's workload drawn by testkit's generator,
// and the paper bands registered in testkit (its figure is bench/figures/twin-fastswitch.figure.mjs).
import cliProgress from 'cli-progress';
import { FASTSWITCH_WORKLOAD, holds, paperWorkloadStats, targetOf, workload } from '@mnemo/testkit';
import { FASTSWITCH_SETUP, fastswitchExperiment, fastswitchRobustness } from '@mnemo/twin';

/** The twin's ports: FastSwitch's workload at a count and seed, and the `twin-fastswitch` targets. */
export const FASTSWITCH_PORTS = {
  draw: (sessions, seed) => workload({ ...FASTSWITCH_WORKLOAD, sessions, seed }),
  holds: (path, value) => holds(value, targetOf('twin-fastswitch', path)),
};

export function runFastswitch({ s = FASTSWITCH_SETUP, robustness = true } = {}) {
  // Without a terminal (a log file), the bar prints a line every 30 s instead of redrawing.
  const bar = new cliProgress.SingleBar(
    {
      format: 'fastswitch |{bar}| {value}/{total} runs · {label} · {duration_formatted}',
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 30_000,
    },
    cliProgress.Presets.shades_classic,
  );
  let offset = 0;
  let total = 0;
  // The runs are synchronous, so the bar's own timer cannot print without a terminal: a line per run then.
  const line = (i, label) => process.stdout.isTTY || console.log(`fastswitch ${i}/${total} ${label}`);
  const progress = (i, n, label) => {
    if (total === 0) bar.start((total = n), 0, { label });
    bar.update(offset + i, { label });
    line(offset + i, label);
  };
  const started = performance.now();
  const result = fastswitchExperiment(FASTSWITCH_PORTS, { s, progress });
  let rob;
  if (robustness) {
    offset = total;
    let first = true;
    rob = fastswitchRobustness(FASTSWITCH_PORTS, {
      s,
      progress: (i, n, label) => {
        if (first) bar.setTotal((total += n));
        first = false;
        bar.update(offset + i, { label });
        line(offset + i, label);
      },
    });
  }
  bar.stop();
  const stats = paperWorkloadStats(FASTSWITCH_PORTS.draw(s.conversations, s.seed), FASTSWITCH_WORKLOAD);
  return {
    ...result,
    setup: {
      ...result.setup,
      workload: {
        ...result.setup.workload,
        generated: { mean_turns: stats.mean_turns, multi_turn_share: stats.multi_turn_share, mean_reply_tokens: stats.mean_reply_tokens },
      },
    },
    ...(rob ? { robustness: rob } : {}),
    experiment_wall_s: Math.round(performance.now() - started) / 1000,
  };
}
