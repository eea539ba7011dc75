// `npm run twin -- plan …`'s arguments, checked before any run starts: every problem is listed at
// once, with the values that would be valid, and the command exits with code 2.
import { deviceKvBlocks, GPUS, MODELS } from '@mnemo/twin';
import { PAPER_WORKLOAD } from './paper-workload.mjs';
import { PLAN_PRICES } from './plan.cost.mjs';

/** The serving systems `npm run twin -- symphony` compares (kv-core SERVING_SYSTEMS), in its order. */
export const PLAN_POLICIES = ['symphony', 'recompute', 'infercept', 'llmd'];

export const PLAN_USAGE =
  'usage: npm run twin -- plan --users N --model M --gpu G --slo-ttft-ms T [--slo-tpot-ms T] [--policy P] [--out FILE]\n' +
  '  --users        closed-loop users, as in `npm run twin -- symphony` (think times compressed 6×)\n' +
  '  --slo-ttft-ms  P99 TTFT the plan must meet, ms\n' +
  "  --slo-tpot-ms  mean TPOT the plan must meet, ms (default: Symphony's SLO rule, 1.5× a light-load decode step)\n" +
  '  --policy       one serving system only (default: all four)\n' +
  '  --out          results file (default: bench/results/twin-plan.json)';

/** A bad command line: `problems` lists each, `code` is the exit status (2, as for usage errors). */
export class PlanArgsError extends Error {
  constructor(problems) {
    super(`${problems.join('\n')}\n${PLAN_USAGE}`);
    this.problems = problems;
    this.code = 2;
  }
}

const FLAGS = {
  '--users': 'users',
  '--model': 'model',
  '--gpu': 'gpu',
  '--slo-ttft-ms': 'sloTtftMs',
  '--slo-tpot-ms': 'sloTpotMs',
  '--policy': 'policy',
  '--out': 'out',
};
const REQUIRED = ['--users', '--model', '--gpu', '--slo-ttft-ms'];

/** GPUs of the hardware tables the cost model has a price for. */
export const PLAN_GPUS = Object.fromEntries(Object.entries(GPUS).filter(([k]) => PLAN_PRICES.gpuHourUsd[k] !== undefined));

/** A key of `table` matching `name` case-insensitively, or undefined. */
const keyOf = (table, name) => Object.keys(table).find((k) => k.toLowerCase() === String(name).toLowerCase());

function positive(flag, raw, problems, integer) {
  const x = Number(raw);
  if (raw === undefined || !Number.isFinite(x) || x <= 0 || (integer && !Number.isInteger(x))) {
    problems.push(
      `${flag} must be a positive ${integer ? 'integer' : 'number'} (got ${raw === undefined ? 'nothing' : JSON.stringify(raw)})`,
    );
    return undefined;
  }
  return x;
}

/**
 * Parses `argv` (the words after `plan`) into { users, model, gpu, sloTtftMs, sloTpotMs, policies,
 * out }; throws PlanArgsError listing every problem. The model must hold the workload's longest
 * session in the GPU's KV memory, or no configuration could serve it.
 */
export function parsePlanArgs(argv) {
  const problems = [];
  const raw = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (!FLAGS[flag]) {
      problems.push(`unknown argument ${JSON.stringify(argv[i])} (valid: ${Object.keys(FLAGS).join(', ')})`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value.startsWith('--')) {
      problems.push(`${flag} needs a value`);
      if (value !== undefined) i--;
      continue;
    }
    raw[FLAGS[flag]] = value;
  }
  for (const flag of REQUIRED)
    if (raw[FLAGS[flag]] === undefined && !problems.some((p) => p.startsWith(flag))) problems.push(`${flag} is required`);
  const users = raw.users === undefined ? undefined : positive('--users', raw.users, problems, true);
  const sloTtftMs = raw.sloTtftMs === undefined ? undefined : positive('--slo-ttft-ms', raw.sloTtftMs, problems, false);
  const sloTpotMs = raw.sloTpotMs === undefined ? null : positive('--slo-tpot-ms', raw.sloTpotMs, problems, false);
  const model = raw.model === undefined ? undefined : keyOf(MODELS, raw.model);
  if (raw.model !== undefined && !model)
    problems.push(`unknown model ${JSON.stringify(raw.model)} (valid: ${Object.keys(MODELS).join(', ')})`);
  const gpu = raw.gpu === undefined ? undefined : keyOf(PLAN_GPUS, raw.gpu);
  if (raw.gpu !== undefined && !gpu) {
    const unpriced = keyOf(GPUS, raw.gpu);
    problems.push(
      `${unpriced ? `gpu ${unpriced} has no price in plan.cost.mjs` : `unknown gpu ${JSON.stringify(raw.gpu)}`} (valid: ${Object.keys(PLAN_GPUS).join(', ')})`,
    );
  }
  const policy = raw.policy === undefined ? undefined : PLAN_POLICIES.find((p) => p === String(raw.policy).toLowerCase());
  if (raw.policy !== undefined && !policy)
    problems.push(`unknown policy ${JSON.stringify(raw.policy)} (valid: ${PLAN_POLICIES.join(', ')})`);
  if (model && gpu) {
    const tokens = deviceKvBlocks(GPUS[gpu], MODELS[model]) * 16;
    if (tokens < PAPER_WORKLOAD.maxSessionTokens)
      problems.push(
        `${model} on one ${gpu} leaves KV room for ${tokens} tokens, under the workload's ${PAPER_WORKLOAD.maxSessionTokens}-token sessions: pick a larger GPU`,
      );
  }
  if (problems.length) throw new PlanArgsError(problems);
  return { users, model, gpu, sloTtftMs, sloTpotMs, policies: policy ? [policy] : PLAN_POLICIES, out: raw.out ?? null };
}
