// `npm run twin -- plan`: the capacity plan on the twin (libs/twin experiments/plan), with a
// progress bar over the policies, each twin run printed as it ends (what the search tried), then
// the table. The plan is the library's; what it cannot import is passed in: the papers' sessions,
// drawn by testkit's generator. Each policy is planned on a thread that imports this module, so
// the ports are bound here, where a thread can find them.
import cliProgress from 'cli-progress';
import { capacityPlan, planOnePolicy as planOf, planTable } from '@mnemo/twin';
import { baseSessions, PAPER_WORKLOAD } from '@mnemo/testkit';

/** The twin's ports: the papers' base sessions at a think-time compression, and their system prompt's length. */
export const PLAN_PORTS = {
  base: (thinkCompression) => baseSessions({ ...PAPER_WORKLOAD, thinkCompression }),
  systemTokens: PAPER_WORKLOAD.systemTokens,
};

/** One policy's plan on this module's ports: what each thread runs. */
export const planOnePolicy = (task, emit) => planOf(PLAN_PORTS, task, emit);

/** The plan with this module's `planOnePolicy` on the threads (capacityPlan's options). */
export const capacityPlanHere = (question, options) => capacityPlan(question, { module: import.meta.url, fn: 'planOnePolicy' }, options);

const fmt = (x) => (x === null ? '—' : String(x));

export async function runPlan(question) {
  const bars = new cliProgress.MultiBar(
    {
      format: 'plan |{bar}| {value}/{total} policies · {label} · {duration_formatted}',
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 30_000,
    },
    cliProgress.Presets.shades_classic,
  );
  const bar = bars.create(question.policies.length, 0, { label: 'planning' });
  let done = 0;
  // Without a terminal the bar does not redraw, so its log buffer would never be printed.
  const log = process.stdout.isTTY ? (line) => bars.log(`${line}\n`) : (line) => console.log(line);
  const onRun = (r) => {
    const s = r.summary;
    log(
      `  ${r.check ? 'whole cluster: ' : 'cell: '}${r.policy} ${r.instances} instances, ${r.hostGb} GB + ${r.ssdTb} TB a node (ran ${s.simulated.instances} with ${s.simulated.users} users): P99 TTFT ${fmt(s.ttft_p99_ms)} ms, mean TPOT ${fmt(s.tpot_mean_ms)} ms over ${s.requests} requests → ${r.meets ? 'meets' : 'misses'} (${s.wall_s} s)`,
    );
  };
  const onPolicy = (policy) => bar.update(++done, { label: `${policy} planned` });
  const result = await capacityPlanHere(question, { onRun, onPolicy });
  bar.update(question.policies.length, { label: 'done' });
  bars.stop();
  console.log(
    `\nusers ${question.users}, ${question.model} on ${question.gpu}, SLO P99 TTFT ≤ ${result.question.slo.ttft_p99_ms} ms, mean TPOT ≤ ${result.question.slo.tpot_mean_ms} ms${result.question.slo.tpot_is_default ? ' (default)' : ''}:`,
  );
  console.log(planTable(result));
  console.log(`${result.search.twin_runs} cell runs and ${result.search.whole_cluster_runs} whole-cluster runs in ${result.wall_s} s`);
  return result;
}
