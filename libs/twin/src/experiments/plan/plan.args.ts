// `npm run twin -- plan …`'s arguments, checked before any run starts: every problem is listed at
// once, with the values that would be valid, and the command exits with code 2.
import { deviceKvBlocks, GPUS, MODELS, type GpuSpec } from '../../costs/hardware.tables.js';
import { PAPER_WORKLOAD_FIT } from '../shared/paper-workload.js';
import { PLAN_PRICES } from './plan.cost.js';
import { PLAN_POLICIES, type PlanGpu, type PlanModel, type PlanQuestion } from './plan.setup.js';

export const PLAN_USAGE =
  'usage: npm run twin -- plan --users N --model M --gpu G --slo-ttft-ms T [--slo-tpot-ms T] [--policy P] [--out FILE]\n' +
  '  --users        closed-loop users, as in `npm run twin -- symphony` (think times compressed 6×)\n' +
  '  --slo-ttft-ms  P99 TTFT the plan must meet, ms\n' +
  "  --slo-tpot-ms  mean TPOT the plan must meet, ms (default: Symphony's SLO rule, 1.5× a light-load decode step)\n" +
  '  --policy       one serving system only (default: all four)\n' +
  '  --out          results file (default: bench/results/twin-plan.json)';

/** A bad command line: `problems` lists each, `code` is the exit status (2, as for usage errors). */
export class PlanArgsError extends Error {
  readonly code = 2;
  constructor(readonly problems: readonly string[]) {
    super(`${problems.join('\n')}\n${PLAN_USAGE}`);
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
} as const;
type Flag = keyof typeof FLAGS;
const REQUIRED: readonly Flag[] = ['--users', '--model', '--gpu', '--slo-ttft-ms'];
const isFlag = (s: string): s is Flag => Object.hasOwn(FLAGS, s);

/** GPUs of the hardware tables the cost model has a price for. */
export const PLAN_GPUS: Readonly<Record<string, GpuSpec>> = Object.fromEntries(
  Object.entries(GPUS).filter(([k]) => PLAN_PRICES.gpuHourUsd[k] !== undefined),
);

/** A key of `table` matching `name` case-insensitively, or undefined. */
const keyOf = <K extends string>(table: Partial<Record<K, unknown>>, name: string): K | undefined =>
  (Object.keys(table) as K[]).find((k) => k.toLowerCase() === name.toLowerCase());

function positive(flag: Flag, raw: string, problems: string[], integer: boolean): number | undefined {
  const x = Number(raw);
  if (!Number.isFinite(x) || x <= 0 || (integer && !Number.isInteger(x))) {
    problems.push(`${flag} must be a positive ${integer ? 'integer' : 'number'} (got ${JSON.stringify(raw)})`);
    return undefined;
  }
  return x;
}

/**
 * Parses `argv` (the words after `plan`) into the question; throws PlanArgsError listing every
 * problem. The model must hold the workload's longest session in the GPU's KV memory, or no
 * configuration could serve it.
 */
export function parsePlanArgs(argv: readonly string[]): PlanQuestion {
  const problems: string[] = [];
  const raw: Partial<Record<(typeof FLAGS)[Flag], string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (!isFlag(flag)) {
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
  const model = raw.model === undefined ? undefined : keyOf<PlanModel>(MODELS, raw.model);
  if (raw.model !== undefined && !model)
    problems.push(`unknown model ${JSON.stringify(raw.model)} (valid: ${Object.keys(MODELS).join(', ')})`);
  const gpu = raw.gpu === undefined ? undefined : keyOf<PlanGpu>(PLAN_GPUS, raw.gpu);
  if (raw.gpu !== undefined && !gpu) {
    const unpriced = keyOf<PlanGpu>(GPUS, raw.gpu);
    const what = unpriced ? `gpu ${unpriced} has no price in plan.cost.ts` : `unknown gpu ${JSON.stringify(raw.gpu)}`;
    problems.push(`${what} (valid: ${Object.keys(PLAN_GPUS).join(', ')})`);
  }
  const policy = raw.policy === undefined ? undefined : PLAN_POLICIES.find((p) => p === raw.policy?.toLowerCase());
  if (raw.policy !== undefined && !policy)
    problems.push(`unknown policy ${JSON.stringify(raw.policy)} (valid: ${PLAN_POLICIES.join(', ')})`);
  if (model && gpu) {
    const tokens = deviceKvBlocks(GPUS[gpu], MODELS[model]) * 16;
    if (tokens < PAPER_WORKLOAD_FIT.maxSessionTokens)
      problems.push(
        `${model} on one ${gpu} leaves KV room for ${tokens} tokens, ` +
          `under the workload's ${PAPER_WORKLOAD_FIT.maxSessionTokens}-token sessions: pick a larger GPU`,
      );
  }
  if (problems.length || users === undefined || sloTtftMs === undefined || sloTpotMs === undefined || !model || !gpu)
    throw new PlanArgsError(problems);
  return { users, model, gpu, sloTtftMs, sloTpotMs, policies: policy ? [policy] : PLAN_POLICIES, out: raw.out ?? null };
}
