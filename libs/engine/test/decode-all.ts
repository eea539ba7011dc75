import type { Engine } from '../src/engine.interface.js';

/** `first` (a prefill's token) and greedy decode steps after it, `n` tokens in all. */
export async function decodeAll(engine: Engine, seqId: string, first: number, n: number): Promise<number[]> {
  const out = [first];
  while (out.length < n) out.push((await engine.decode([seqId]))[0]!.token);
  return out;
}
