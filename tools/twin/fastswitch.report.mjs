// The FastSwitch experiment's results, with a progress bar while it runs (its figure is
// bench/figures/twin-fastswitch.figure.mjs, rendered from the results file).
import cliProgress from 'cli-progress';
import { paperWorkloadStats } from './paper-workload.mjs';
import { FASTSWITCH_WORKLOAD } from './paper-workload.mjs';
import { workload } from '@mnemo/testkit';
import { FASTSWITCH_SETUP, fastswitchExperiment } from './fastswitch.mjs';
import { fastswitchRobustness } from './fastswitch-robustness.mjs';

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
  const result = fastswitchExperiment({ s, progress });
  let rob;
  if (robustness) {
    offset = total;
    let first = true;
    rob = fastswitchRobustness({
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
  const stats = paperWorkloadStats(workload({ ...FASTSWITCH_WORKLOAD, sessions: s.conversations, seed: s.seed }), FASTSWITCH_WORKLOAD);
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
