import { ErrorCode, MnemoError } from '@mnemo/kv-core';

/** Where a job's prompts come from: seeded synthetic token sequences, or a user's JSONL of prompts. */
export type DatasetSpec =
  | { readonly kind: 'synthetic'; readonly prompts: number; readonly tokens: number; readonly seed: number }
  | { readonly kind: 'jsonl'; readonly lines: readonly string[] };

export interface ProfilingLimits {
  readonly maxPrompts: number;
  readonly maxPromptTokens: number;
  readonly maxContinuationTokens: number;
}

const DEFAULTS = { prompts: 8, tokens: 48, seed: 42, continuationTokens: 16 };

/**
 * A validated `POST /v1/profiler/jobs` body:
 * `{ base, derived, continuationTokens?, dataset?: { kind: 'synthetic', prompts?, tokens?, seed? } | { kind: 'jsonl', jsonl } }`
 * where each JSONL line is `{"prompt": "..."}`. Every problem is listed at once.
 */
export class StartProfilingJobCommand {
  private constructor(
    readonly base: string,
    readonly derived: string,
    readonly continuationTokens: number,
    readonly dataset: DatasetSpec,
  ) {}

  static from(body: unknown, limits: ProfilingLimits): StartProfilingJobCommand {
    const problems: string[] = [];
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) problems.push('body must be a JSON object');
    const str = (k: string): string => {
      const v = b[k];
      if (typeof v !== 'string' || v.length === 0 || v.length > 200) problems.push(`${k} must be a model id (1–200 characters)`);
      return typeof v === 'string' ? v : '';
    };
    const int = (o: Record<string, unknown>, k: string, def: number, min: number, max: number, prefix = ''): number => {
      const v = o[k] ?? def;
      if (!Number.isInteger(v) || (v as number) < min || (v as number) > max)
        problems.push(`${prefix}${k} must be an integer in [${min}, ${max}]`);
      return v as number;
    };
    const base = str('base');
    const derived = str('derived');
    if (base !== '' && base === derived) problems.push('base and derived must be different models');
    const continuationTokens = int(b, 'continuationTokens', DEFAULTS.continuationTokens, 1, limits.maxContinuationTokens);
    const dataset = StartProfilingJobCommand.dataset(b.dataset, limits, problems, int);
    if (problems.length > 0) throw new MnemoError(ErrorCode.InvalidRequest, problems.join('; '), { problems });
    return new StartProfilingJobCommand(base, derived, continuationTokens, dataset);
  }

  private static dataset(
    raw: unknown,
    limits: ProfilingLimits,
    problems: string[],
    int: (o: Record<string, unknown>, k: string, def: number, min: number, max: number, prefix?: string) => number,
  ): DatasetSpec {
    const d = (raw ?? { kind: 'synthetic' }) as Record<string, unknown>;
    if (typeof d !== 'object' || Array.isArray(d)) {
      problems.push('dataset must be an object');
      return { kind: 'jsonl', lines: [] };
    }
    if (d.kind === 'synthetic') {
      return {
        kind: 'synthetic',
        prompts: int(d, 'prompts', DEFAULTS.prompts, 1, limits.maxPrompts, 'dataset.'),
        tokens: int(d, 'tokens', DEFAULTS.tokens, 1, limits.maxPromptTokens, 'dataset.'),
        seed: int(d, 'seed', DEFAULTS.seed, 0, 2 ** 31 - 1, 'dataset.'),
      };
    }
    if (d.kind !== 'jsonl') {
      problems.push("dataset.kind must be 'synthetic' or 'jsonl'");
      return { kind: 'jsonl', lines: [] };
    }
    if (typeof d.jsonl !== 'string') {
      problems.push('dataset.jsonl must be a string of JSON lines {"prompt": "..."}');
      return { kind: 'jsonl', lines: [] };
    }
    const lines: string[] = [];
    d.jsonl.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let prompt: unknown;
      try {
        prompt = (JSON.parse(line) as { prompt?: unknown })?.prompt;
      } catch {
        problems.push(`dataset.jsonl line ${i + 1} is not JSON`);
        return;
      }
      if (typeof prompt !== 'string' || prompt.length === 0) problems.push(`dataset.jsonl line ${i + 1} needs a non-empty string "prompt"`);
      else lines.push(prompt);
    });
    if (lines.length === 0 && !problems.some((p) => p.startsWith('dataset.jsonl'))) problems.push('dataset.jsonl holds no prompts');
    if (lines.length > limits.maxPrompts) problems.push(`dataset.jsonl holds ${lines.length} prompts; at most ${limits.maxPrompts}`);
    return { kind: 'jsonl', lines };
  }
}
