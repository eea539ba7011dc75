import { gunzipSync } from 'node:zlib';
import { TraceBlockBook } from './trace.blocks.js';

/**
 * Mooncake's trace format (the FAST'25 release, one JSON object a line): `timestamp` (ms from the
 * trace's start), `input_length` and `output_length` (tokens), `hash_ids` (one id per block of
 * TRACE_BLOCK_TOKENS prompt tokens, the last block partial; a block's id covers it and every block
 * before it). Any file in this format works, gzipped or not.
 */
export const TRACE_BLOCK_TOKENS = 512;

export interface TraceLine {
  readonly timestamp: number;
  readonly input_length: number;
  readonly output_length: number;
  readonly hash_ids: readonly number[];
}

/** One request of a loaded trace, scaled by the options. */
export interface TraceRequest {
  /** Its line in the file, from 0. */
  readonly line: number;
  /** Arrival, ms from the first loaded request (the trace's timestamp × timeScale). */
  readonly arrivalMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly blockIds: readonly number[];
  /** Tokens of the last block (the others hold tokensPerBlock). */
  readonly lastBlockTokens: number;
  /** Mnemo's chunk keys of the prompt's whole chunks, in prefix order. */
  readonly chunkKeys: readonly string[];
}

export interface TraceOptions {
  /** Arrival times are multiplied by this (0.5 = the same traffic twice as fast). Default 1. */
  readonly timeScale?: number;
  /**
   * Tokens per block (a multiple of 256, Mnemo's chunk): lengths scale by this ÷ 512, so a CPU-sized
   * live run keeps the trace's sharing with shorter prompts. Default 512 (the trace's own).
   */
  readonly tokensPerBlock?: number;
  /** First line to load (from 0). Default 0. */
  readonly from?: number;
  /** Most requests to load. Default all. */
  readonly limit?: number;
  /** The chunk keys' model id, tenant salt and vocabulary. */
  readonly model?: string;
  readonly salt?: string;
  readonly vocab?: number;
}

export interface LoadedTrace {
  readonly requests: readonly TraceRequest[];
  readonly blocks: TraceBlockBook;
  readonly options: Required<TraceOptions>;
}

export const DEFAULT_TRACE_OPTIONS: Required<TraceOptions> = {
  timeScale: 1,
  tokensPerBlock: TRACE_BLOCK_TOKENS,
  from: 0,
  limit: Infinity,
  model: 'llama3-70b',
  salt: '',
  vocab: 128_000,
};

/** A trace file's bytes as text, gunzipped when they start with gzip's magic bytes (the caller reads the file). */
export function traceText(raw: Uint8Array): string {
  return Buffer.from(raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).toString('utf8');
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** One line checked against the format; a bad line throws with its number. */
export function parseTraceLine(text: string, line: number): TraceLine {
  let o: Partial<TraceLine>;
  try {
    o = JSON.parse(text) as Partial<TraceLine>;
  } catch {
    throw new RangeError(`trace line ${line + 1}: not JSON`);
  }
  const bad = (what: string) => new RangeError(`trace line ${line + 1}: ${what}`);
  if (o === null || typeof o !== 'object') throw bad('not an object');
  if (typeof o.timestamp !== 'number' || !Number.isFinite(o.timestamp) || o.timestamp < 0) throw bad('timestamp must be a number ≥ 0');
  if (!isCount(o.input_length) || o.input_length === 0) throw bad('input_length must be an integer ≥ 1');
  if (!isCount(o.output_length)) throw bad('output_length must be an integer ≥ 0');
  if (!Array.isArray(o.hash_ids) || !o.hash_ids.every(isCount)) throw bad('hash_ids must be an array of integers ≥ 0');
  if (o.hash_ids.length !== Math.ceil(o.input_length / TRACE_BLOCK_TOKENS))
    throw bad(`${o.hash_ids.length} hash_ids for ${o.input_length} input tokens (one per ${TRACE_BLOCK_TOKENS})`);
  return o as TraceLine;
}

/** Parses and scales a trace's text: requests in file order, arrivals from the first loaded one. */
export function loadTrace(text: string, options: TraceOptions = {}): LoadedTrace {
  const o = { ...DEFAULT_TRACE_OPTIONS, ...options };
  if (!(o.timeScale > 0) || !Number.isFinite(o.timeScale)) throw new RangeError(`time scale must be > 0, got ${o.timeScale}`);
  if (!isCount(o.from)) throw new RangeError(`from must be an integer ≥ 0, got ${o.from}`);
  if (o.limit !== Infinity && (!isCount(o.limit) || o.limit === 0)) throw new RangeError(`limit must be an integer ≥ 1, got ${o.limit}`);
  const blocks = new TraceBlockBook({ tokensPerBlock: o.tokensPerBlock, model: o.model, salt: o.salt, vocab: o.vocab });
  const scale = o.tokensPerBlock / TRACE_BLOCK_TOKENS;
  const lines = text.split('\n');
  const requests: TraceRequest[] = [];
  let start: number | undefined;
  for (let i = 0, seen = 0; i < lines.length && requests.length < o.limit; i++) {
    if (lines[i]!.trim() === '') continue;
    if (seen++ < o.from) continue;
    const l = parseTraceLine(lines[i]!, i);
    start ??= l.timestamp;
    const n = l.hash_ids.length;
    const lastBlockTokens = Math.max(1, Math.ceil((l.input_length - (n - 1) * TRACE_BLOCK_TOKENS) * scale));
    requests.push({
      line: i,
      arrivalMs: (l.timestamp - start) * o.timeScale,
      inputTokens: (n - 1) * o.tokensPerBlock + lastBlockTokens,
      outputTokens: l.output_length === 0 ? 0 : Math.max(1, Math.round(l.output_length * scale)),
      blockIds: l.hash_ids,
      lastBlockTokens,
      chunkKeys: blocks.chunkKeys(l.hash_ids, lastBlockTokens),
    });
  }
  if (requests.length === 0) throw new RangeError(`no requests in the trace from line ${o.from}`);
  return { requests, blocks, options: o };
}
