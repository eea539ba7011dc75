import { CHUNK_TOKENS } from '@mnemo/kv-core';
import type { LoadedTrace, TraceRequest } from './mooncake.trace.js';

/** Mooncake FAST'25 Table 2, the conversation trace: average input and output lengths, cache ratio. */
export const MOONCAKE_TABLE2_CONVERSATION = { input_mean: 12_035, output_mean: 343, cache_ratio: 0.4 } as const;

export interface TraceStats {
  readonly requests: number;
  readonly duration_s: number;
  readonly input_mean: number;
  readonly output_mean: number;
  /** Share of prompt tokens an unbounded cache could serve: the leading chunks some earlier request already had. */
  readonly max_hit_rate: number;
  readonly unique_blocks: number;
  readonly unique_block_tokens: number;
  readonly chunk_keys_built: number;
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Leading chunks of each request some earlier request held: a cache that never evicts serves
 * exactly these (a prefix stops at its first unseen chunk).
 */
export function reusableChunks(requests: readonly TraceRequest[]): number[] {
  const seen = new Set<string>();
  return requests.map((r) => {
    let lead = 0;
    while (lead < r.chunkKeys.length && seen.has(r.chunkKeys[lead]!)) lead++;
    for (const k of r.chunkKeys) seen.add(k);
    return lead;
  });
}

export function traceStats(t: LoadedTrace): TraceStats {
  const rs = t.requests;
  const input = rs.reduce((s, r) => s + r.inputTokens, 0);
  const reused = reusableChunks(rs).reduce((s, c) => s + c * CHUNK_TOKENS, 0);
  const first = rs.reduce((m, r) => Math.min(m, r.arrivalMs), Infinity);
  const last = rs.reduce((m, r) => Math.max(m, r.arrivalMs), -Infinity);
  return {
    requests: rs.length,
    duration_s: r4((last - first) / 1000),
    input_mean: Math.round(input / rs.length),
    output_mean: Math.round(rs.reduce((s, r) => s + r.outputTokens, 0) / rs.length),
    max_hit_rate: r4(reused / input),
    unique_blocks: t.blocks.size,
    unique_block_tokens: t.blocks.size * t.options.tokensPerBlock,
    chunk_keys_built: t.blocks.size * t.blocks.chunksPerBlock,
  };
}

/** The statistics beside Table 2's, as lines for a terminal. */
export function formatTraceStats(s: TraceStats, paper: { input_mean: number; output_mean: number; cache_ratio: number } | null): string[] {
  const row = (name: string, ours: number | string, theirs: number | string | null) =>
    `${name.padEnd(22)} ${String(ours).padStart(12)} ${theirs === null ? '' : String(theirs).padStart(12)}`;
  return [
    row('', 'this trace', paper ? 'Table 2' : null),
    row('requests', s.requests, null),
    row('duration (s)', s.duration_s, null),
    row('input mean (tokens)', s.input_mean, paper?.input_mean ?? null),
    row('output mean (tokens)', s.output_mean, paper?.output_mean ?? null),
    row('max hit rate', s.max_hit_rate, paper?.cache_ratio ?? null),
    row('unique blocks', s.unique_blocks, null),
    row('unique block tokens', s.unique_block_tokens, null),
  ];
}
