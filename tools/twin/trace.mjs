// `npm run twin -- trace --trace FILE …`: Mooncake's experiments on a trace (libs/twin trace/), with a
// progress bar; the results and the statistics beside Table 2 are the library's.
import cliProgress from 'cli-progress';
import { readFileSync } from 'node:fs';
import { formatTraceStats, loadTrace, MOONCAKE_TABLE2_CONVERSATION, traceExperiment, traceStats, traceText } from '@mnemo/twin';

export function runTrace(cmd) {
  const t0 = performance.now();
  const trace = loadTrace(traceText(readFileSync(cmd.file)), cmd.load);
  const loadS = Math.round(performance.now() - t0) / 1000;
  const stats = traceStats(trace);
  const table2 = cmd.paper.fig10.hitGlobalOverLocal !== null ? MOONCAKE_TABLE2_CONVERSATION : null;
  for (const line of formatTraceStats(stats, table2)) console.log(line);
  console.log(`loaded in ${loadS} s: ${stats.chunk_keys_built} chunk keys built for ${stats.unique_blocks} unique blocks`);
  // The runs are synchronous, so the bar redraws as each starts; without a terminal (a log file) it prints a line a run.
  const tty = process.stdout.isTTY === true;
  const bar = new cliProgress.SingleBar(
    { format: 'trace |{bar}| {value}/{total} runs · {label} · {duration_formatted}', clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const progress = (i, n, label) => {
    if (!tty) return console.log(`trace ${i}/${n} runs · ${label} · ${Math.round(performance.now() - t0) / 1000} s`);
    if (!started) bar.start(n, 0, { label });
    started = true;
    bar.update(i, { label });
  };
  const result = traceExperiment(trace, cmd.paper, cmd.experiment, progress);
  if (started) bar.stop();
  return {
    trace: { file: cmd.file, ...result.trace, table2, load_s: loadS, options: { ...trace.options, limit: cmd.load.limit ?? null } },
    ...result,
    trace_wall_s: Math.round(performance.now() - t0) / 1000,
  };
}
