// `npm run twin -- <command>`: the discrete-event twin (libs/twin) on this machine.
//   calibrate   measure service overheads and link costs (bench/results/twin-calibration.json)
//   validate    run the twin on the multi-round benchmark's workload and compare with the live run
//               (bench/results/twin-validate.json; calibrates first when no calibration exists);
//               `validate --engine`: against the reference-engine run (bench multiround-engine) with the compute
//               port fitted on its calibration seed (bench/results/twin-validate-engine.json)
//   scale       time one simulated hour of 1,024 users on 8 instances (the `scale` key of the same file)
//   symphony    Symphony's experiment at the paper's scale on modelled A100s (bench/results/twin-symphony.{json,svg})
//   symphony-robustness  its ratios against recompute with each hardware figure at ±20% (the `robustness` key of the same file)
//   pooling     unified KV pooling's experiment: one Long Doc QA request at a time, 1K–128K tokens, on a modelled H100
//               with two DDR4 modules and two NVMe drives, and its ±20% robustness rows (bench/results/twin-pooling.{json,svg})
//   swiftcache  SwiftCache's experiment: an LWM master and two Qwen3 workers on modelled H20s — max context against vLLM
//               chunked prefill, P99 TTFT against PCIe CPU offload, worker interference — and its ±20% robustness rows
//               (bench/results/twin-swiftcache.{json,svg})
//   droidspeak  DroidSpeak's serving experiment: Llama-3.1-8B on a modelled A100, HotpotQA-like contexts whose base-model KV
//               and E cache come over InfiniBand, uniform arrivals; full prefill, full reuse and kv-core's plan choice on
//               the trained pairs' measured profiles, and its ±20% robustness rows (bench/results/twin-droidspeak.{json,svg})
//   plan        the cheapest configuration (instances, host GB and SSD TB per node) of each serving system meeting
//               a P99 TTFT (and mean TPOT) SLO for N users: `plan --users N --model M --gpu G --slo-ttft-ms T
//               [--slo-tpot-ms T] [--policy P] [--out FILE]` (bench/results/twin-plan.json unless --out)
//   bands       re-judge every twin results file's paper-band headlines (twin_headlines_in_band) against the targets
//               in libs/testkit/src/results/targets.ts as they are now, without re-running anything
//   fastswitch  FastSwitch's experiment: Llama-8B on a modelled A10, priority-driven swap preemption, vLLM's per-block swaps
//               against block groups + async swap-in + host-copy reuse over the per-call dispatch, with its ±20% rows
//               (bench/results/twin-fastswitch.{json,svg}); `fastswitch --no-robustness` leaves the rows out
//   trace       Mooncake's FAST'25 experiments on a request trace in its format: `trace --trace FILE [--nodes N]
//               [--cache-tokens T] [--policy P]` (bench/results/twin-trace-<file's base name>.{json,svg}; docs/traces.md)
// Each results file is stamped like a benchmark's and docs/results.md is regenerated.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { headlinesInBand, runStamp, writeReport } from '@mnemo/testkit';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const COMMANDS = [
  'calibrate',
  'validate',
  'scale',
  'symphony',
  'symphony-robustness',
  'pooling',
  'swiftcache',
  'droidspeak',
  'plan',
  'fastswitch',
  'trace',
  'bands',
];
const [cmd, ...args] = process.argv.slice(2);
if (!COMMANDS.includes(cmd)) {
  console.error(`usage: npm run twin -- <${COMMANDS.join('|')}>`);
  process.exit(2);
}
const loadStart = loadavg();
const stamp = () => ({ run: { ...runStamp({ args: [cmd, ...args], loadStart }), command: `npm run twin -- ${[cmd, ...args].join(' ')}` } });
const path = (name) => join(root, 'bench/results', name);
const read = (name) => (existsSync(path(name)) ? JSON.parse(readFileSync(path(name), 'utf8')) : undefined);
const write = (name, json) => {
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  // Every paper-band headline of the file, judged where it is written (libs/testkit/src/results/targets.ts).
  const bands = headlinesInBand(name.replace(/\.json$/, ''), json);
  const out = bands.total > 0 ? { ...json, twin_headlines_in_band: bands } : json;
  writeFileSync(path(name), JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote bench/results/${name}`);
};

/** The command's arguments through `parse`; a usage error (`UsageError`) prints its message and exits with its code. */
function argsOrExit(parse, UsageError) {
  try {
    return parse(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(e.message);
    process.exit(e.code);
  }
}

async function calibration() {
  const { calibrate } = await import('../tools/twin/calibrate.mjs');
  const measured = await calibrate();
  const cal = { ...stamp(), ...measured };
  write('twin-calibration.json', cal);
  return cal;
}

if (cmd === 'calibrate') await calibration();
if (cmd === 'validate' && args.includes('--engine')) {
  // Against the reference engine: the live run and its frozen compute fit are bench multiround-engine's.
  const mr = read('multiround-engine.json');
  if (!mr) throw new Error('no bench/results/multiround-engine.json: run `npm run bench -- multiround-engine` first');
  const cal = read('twin-calibration.json') ?? (await calibration());
  const { validate } = await import('../tools/twin/validate.mjs');
  const result = validate({ mr, cal, liveFile: 'bench/results/multiround-engine.json' });
  write('twin-validate-engine.json', { ...stamp(), ...result });
} else if (cmd === 'validate') {
  const mr = read('multiround.json');
  if (!mr) throw new Error('no bench/results/multiround.json: run `npm run bench -- multiround` first');
  const cal = read('twin-calibration.json') ?? (await calibration());
  const { validate } = await import('../tools/twin/validate.mjs');
  const previous = read('twin-validate.json');
  // Stamped after the run, so the load average at its end is the end's.
  const result = validate({ mr, cal });
  write('twin-validate.json', { ...stamp(), ...result, ...(previous?.scale ? { scale: previous.scale } : {}) });
}
if (cmd === 'scale') {
  const { scale } = await import('../tools/twin/scale.mjs');
  const previous = read('twin-validate.json') ?? {};
  const result = scale();
  write('twin-validate.json', { ...previous, scale: { run: stamp().run, ...result } });
}
if (cmd === 'symphony') {
  const { runSymphony } = await import('../tools/twin/symphony.mjs');
  const previous = read('twin-symphony.json');
  const { json } = await runSymphony();
  // The ±20% table is its own command's (symphony-robustness): a new run keeps it.
  write('twin-symphony.json', { ...stamp(), ...json, ...(previous?.robustness ? { robustness: previous.robustness } : {}) });
  const { writeFigure } = await import('@mnemo/testkit');
  console.log(`rendered ${(await writeFigure(root, 'twin-symphony')).join(' and ')}`);
}
if (cmd === 'symphony-robustness') {
  const previous = read('twin-symphony.json');
  if (!previous) throw new Error('no bench/results/twin-symphony.json: run `npm run twin -- symphony` first');
  const { runSymphonyRobustness } = await import('../tools/twin/symphony.mjs');
  const progress = (i, n, label) => console.log(`robustness ${i}/${n} ${label}`);
  write('twin-symphony.json', { ...previous, robustness: { run: stamp().run, ...runSymphonyRobustness({ progress }) } });
}
if (cmd === 'pooling') {
  const { runPooling } = await import('../tools/twin/pooling.mjs');
  const started = performance.now();
  const result = runPooling();
  write('twin-pooling.json', { ...stamp(), ...result, wall_s: Math.round(performance.now() - started) / 1000 });
  const { writeFigure } = await import('@mnemo/testkit');
  console.log(`rendered ${(await writeFigure(root, 'twin-pooling')).join(' and ')}`);
  for (const [k, v] of Object.entries(result.pooling)) console.log(`pooling.${k}: ${JSON.stringify(v)}`);
}
if (cmd === 'swiftcache') {
  const { runSwiftcache } = await import('../tools/twin/swiftcache.mjs');
  const json = runSwiftcache();
  write('twin-swiftcache.json', { ...stamp(), ...json });
  const { writeFigure } = await import('@mnemo/testkit');
  console.log(`rendered ${(await writeFigure(root, 'twin-swiftcache')).join(' and ')}`);
  for (const [k, v] of Object.entries(json.swiftcache)) console.log(`swiftcache.${k}: ${JSON.stringify(v)}`);
}
if (cmd === 'droidspeak') {
  const { runDroidspeak } = await import('../tools/twin/droidspeak.mjs');
  const result = await runDroidspeak();
  write('twin-droidspeak.json', { ...stamp(), ...result });
  const { writeFigure } = await import('@mnemo/testkit');
  console.log(`rendered ${(await writeFigure(root, 'twin-droidspeak')).join(' and ')}`);
  for (const [k, v] of Object.entries(result.droidspeak)) if (k !== 'by_pair') console.log(`droidspeak.${k}: ${JSON.stringify(v)}`);
}
if (cmd === 'plan') {
  const { parsePlanArgs, PlanArgsError } = await import('@mnemo/twin');
  const { runPlan } = await import('../tools/twin/plan.mjs');
  const question = argsOrExit(parsePlanArgs, PlanArgsError);
  const result = await runPlan(question);
  // From node's start to the file, so it includes loading the modules and drawing the workload.
  const json = { ...stamp(), ...result, process_wall_s: Math.round(process.uptime() * 10) / 10 };
  if (question.out) {
    mkdirSync(dirname(question.out), { recursive: true });
    writeFileSync(question.out, JSON.stringify(json, null, 2) + '\n');
    console.log(`wrote ${question.out}`);
    process.exit(0);
  }
  write('twin-plan.json', json);
}
if (cmd === 'fastswitch') {
  const { runFastswitch } = await import('../tools/twin/fastswitch.mjs');
  const result = runFastswitch({ robustness: !args.includes('--no-robustness') });
  write('twin-fastswitch.json', { ...stamp(), ...result });
  const { writeFigure } = await import('@mnemo/testkit');
  console.log(`rendered ${(await writeFigure(root, 'twin-fastswitch')).join(' and ')}`);
  for (const [k, v] of Object.entries(result.fastswitch)) console.log(`fastswitch.${k}: ${JSON.stringify(v)}`);
}
if (cmd === 'trace') {
  const { parseTraceArgs, TraceArgsError } = await import('@mnemo/twin');
  const trace = argsOrExit(parseTraceArgs, TraceArgsError);
  const { runTrace } = await import('../tools/twin/trace.mjs');
  const name = `twin-trace-${trace.name}`;
  write(`${name}.json`, { ...stamp(), ...runTrace(trace) });
  const { renderSvg, specText } = await import('@mnemo/testkit');
  const { figure } = await import('../bench/lib/trace.figure.mjs');
  const spec = figure(read(`${name}.json`));
  writeFileSync(path(`${name}.vl.json`), specText(spec));
  writeFileSync(path(`${name}.svg`), await renderSvg(spec));
  console.log(`rendered bench/results/${name}.vl.json and bench/results/${name}.svg`);
  for (const [k, v] of Object.entries(read(`${name}.json`).paper_check)) console.log(`paper_check.${k}: ${JSON.stringify(v)}`);
}
if (cmd === 'bands') {
  // Causes an experiment traces from its own results file's figures, recomputed with them (no run).
  const causes = {
    'twin-symphony.json': async (json) => (await import('@mnemo/twin')).symphonyCauses(json),
    'twin-fastswitch.json': async (json) => (await import('@mnemo/twin')).fastswitchCausesOf(json),
  };
  for (const f of readdirSync(join(root, 'bench/results')).filter((n) => /^twin-.*\.json$/.test(n) && !n.endsWith('.vl.json'))) {
    const json = read(f);
    // The old judgement goes: `write` judges the file again against today's targets.
    const rest = { ...json };
    delete rest.twin_headlines_in_band;
    if (causes[f]) rest.disagreement_causes = await causes[f](rest);
    write(f, rest);
  }
}
writeReport(root);
console.log('regenerated docs/results.md: commit it with the results');
