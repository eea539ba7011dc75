// Test fixture (imported by specs only): one model's conversations on the reference engine — the
// tokens, the stored prompt a node would build for them, and a greedy prefill-then-decode whose KV
// the fidelity specs compare bit for bit.
import { chunkBlockKeys, chunkKeys } from '@mnemo/kv-core';
import type { PrefillInput, ReferenceEngine } from '@mnemo/engine';
import type { KvStore, StoredPrompt } from '../src/kv-store/kv.store.js';

export const MODEL = 'mnemo-tiny';
export const GREEDY = { temperature: 0, topP: 1, seed: 0 };
export const toks = (n: number, salt: number): number[] => Array.from({ length: n }, (_, i) => (i * 31 + salt * 17 + 3) % 250);
export const bits = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length);

export function storedPrompt(tokens: readonly number[], tenant = 't'): StoredPrompt {
  const keys = chunkKeys(MODEL, tenant, tokens);
  return { model: MODEL, chunkKeys: keys, promptTokens: tokens.length, blockKeys: (c) => chunkBlockKeys(MODEL, tenant, tokens, keys, c) };
}

/**
 * Prefills and decodes greedily; returns the tokens and the whole KV. `from` restores the prompt:
 * a restore callback, or a store asked as a node asks it (`warm`: its SSD reads started first, as
 * when the request arrives).
 */
export async function converse(
  engine: ReferenceEngine,
  seqId: string,
  tokens: number[],
  n: number,
  from?: PrefillInput['restore'] | KvStore,
  warm = false,
): Promise<{ out: number[]; kv: Float32Array; cached: number; restored: number }> {
  const prompt = storedPrompt(tokens);
  const store = typeof from === 'object' ? from : undefined;
  const restore = typeof from === 'function' ? from : store && ((d: number) => store.restorePlan(prompt, d, seqId));
  const input: PrefillInput = { seqId, model: MODEL, tokens, sampling: GREEDY, cacheSalt: 't', restore };
  if (store && warm) store.warm(seqId, prompt, engine.cachedTokens(input));
  const [first] = await engine.prefill([input]);
  const out = [first!.token];
  while (out.length < n) out.push((await engine.decode([seqId]))[0]!.token);
  const kv = engine.exportKv(seqId, { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: tokens.length + n - 1 });
  engine.release(seqId);
  return { out, kv, cached: first!.cachedTokens ?? 0, restored: first!.restoredTokens ?? 0 };
}
