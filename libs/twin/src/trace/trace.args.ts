import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { CHUNK_TOKENS } from '@mnemo/kv-core';
import type { TraceOptions } from './mooncake.trace.js';
import { TRACE_POLICIES, type TracePolicy } from './prefill-pool.sim.js';
import { DEFAULT_TRACE_EXPERIMENT, type TraceExperimentOptions } from './trace.experiment.js';
import { MOONCAKE_CONVERSATION_PAPER, unknownPaper, type TracePaper } from './trace.paper.js';

export const TRACE_USAGE =
  'usage: npm run twin -- trace --trace FILE [--nodes N] [--cache-tokens T] [--ssd-tokens T] [--policy P[,P…]]\n' +
  '                             [--time-scale X] [--length-scale TOKENS] [--from LINE] [--limit N] [--fit-ttft-ms MS]\n' +
  "  --trace         a JSONL trace in Mooncake's format, gzipped or not (docs/traces.md)\n" +
  `  --policy        of ${TRACE_POLICIES.join(', ')} (default: all)\n` +
  "  --time-scale    arrivals × this (default 1: the trace's own timestamps, as the paper replays it)\n" +
  `  --length-scale  tokens per trace block, a multiple of ${CHUNK_TOKENS} (default 512: the trace's own)\n` +
  '  --fit-ttft-ms   fit the time scale so local cache-aware mean TTFT is this (default: no fit)';

export class TraceArgsError extends Error {
  readonly code = 2;
  constructor(readonly problems: readonly string[]) {
    super(`${problems.join('\n')}\n${TRACE_USAGE}`);
  }
}

export interface TraceCommand {
  readonly file: string;
  /** The results file's name part: the file's base name less .gz and .jsonl. */
  readonly name: string;
  readonly load: TraceOptions;
  readonly experiment: TraceExperimentOptions;
  readonly paper: TracePaper;
}

/** The file name Mooncake's release gives its conversation trace: the paper's figures apply to it. */
export const MOONCAKE_CONVERSATION_NAME = 'mooncake-conversation_trace';

export const traceName = (file: string) =>
  basename(file)
    .replace(/\.gz$/, '')
    .replace(/\.jsonl$/, '');

/** Parses `npm run twin -- trace`'s words; every problem at once as a TraceArgsError. */
export function parseTraceArgs(argv: readonly string[]): TraceCommand {
  const problems: string[] = [];
  let v: Record<string, string | undefined> = {};
  try {
    v = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        ['trace', 'nodes', 'cache-tokens', 'ssd-tokens', 'policy', 'time-scale', 'length-scale', 'from', 'limit', 'fit-ttft-ms'].map(
          (k) => [k, { type: 'string' as const }],
        ),
      ),
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>;
  } catch (e) {
    throw new TraceArgsError([(e as Error).message]);
  }
  const num = (flag: string, def: number, ok: (x: number) => boolean, what: string): number => {
    const raw = v[flag];
    if (raw === undefined) return def;
    const x = Number(raw);
    if (!Number.isFinite(x) || !ok(x)) problems.push(`--${flag} must be ${what} (got ${JSON.stringify(raw)})`);
    return x;
  };
  const int = (x: number) => Number.isInteger(x) && x >= 1;
  if (!v.trace) problems.push('--trace FILE is required');
  const nodes = num('nodes', DEFAULT_TRACE_EXPERIMENT.nodes, int, 'an integer ≥ 1');
  const hostTokens = num('cache-tokens', DEFAULT_TRACE_EXPERIMENT.hostTokens, (x) => x >= CHUNK_TOKENS, `≥ ${CHUNK_TOKENS}`);
  const ssdTokens = num('ssd-tokens', 0, (x) => x >= 0, '≥ 0');
  const timeScale = num('time-scale', 1, (x) => x > 0, 'a number > 0');
  const tokensPerBlock = num('length-scale', 512, (x) => int(x) && x % CHUNK_TOKENS === 0, `a positive multiple of ${CHUNK_TOKENS}`);
  const from = num('from', 0, (x) => Number.isInteger(x) && x >= 0, 'an integer ≥ 0');
  const limit = num('limit', Infinity, int, 'an integer ≥ 1');
  const fit = num('fit-ttft-ms', NaN, (x) => x > 0, 'a number > 0');
  const policies = (v.policy ?? TRACE_POLICIES.join(',')).split(',').filter(Boolean);
  for (const p of policies)
    if (!(TRACE_POLICIES as readonly string[]).includes(p)) problems.push(`--policy ${p} is not one of ${TRACE_POLICIES.join(', ')}`);
  if (Number.isFinite(fit) && v['time-scale'] !== undefined)
    problems.push('--fit-ttft-ms fits the time scale: give it or --time-scale, not both');
  if (problems.length > 0) throw new TraceArgsError(problems);
  const name = traceName(v.trace!);
  const known = name === MOONCAKE_CONVERSATION_NAME && tokensPerBlock === 512 && from === 0 && limit === Infinity;
  const fitTtftMs = Number.isFinite(fit) ? fit : null;
  const paper = known ? MOONCAKE_CONVERSATION_PAPER : unknownPaper(null);
  return {
    file: v.trace!,
    // A fitted run is a companion of the run as recorded, never in its place: its results sit beside it.
    name: fitTtftMs === null ? name : `${name}-fitted`,
    load: { tokensPerBlock, from, limit },
    experiment: { ...DEFAULT_TRACE_EXPERIMENT, nodes, hostTokens, ssdTokens, timeScale, fitTtftMs, policies: policies as TracePolicy[] },
    paper,
  };
}
