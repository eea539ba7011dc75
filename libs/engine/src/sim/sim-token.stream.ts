import { seedPromptLength } from '@mnemo/kv-core';
import { SeededPrng } from '../weights/seeded.prng.js';

/** Printable ASCII (space … '~'): every sim token decodes to visible text with the byte tokenizer. */
export const SIM_FIRST_PRINTABLE = 0x20;
export const SIM_LAST_PRINTABLE = 0x7e;

/**
 * One sequence's token source. Seeded from (seed, prompt) so the same request always produces
 * the same tokens on any node; greedy requests (temperature 0) ignore the seed, like a real
 * argmax sampler would. EOS appears with probability `eosProbability` per token (0 = never).
 * A failover continuation (`drawOffset` > 0: the prompt ends with that many tokens an earlier
 * run of the stream produced) is seeded from the prompt before them and skips as many steps, so
 * it goes on with the earlier run's next token instead of reseeding from the longer prompt.
 */
export class SimTokenStream {
  private readonly prng: SeededPrng;

  constructor(
    seed: number,
    prompt: readonly number[],
    temperature: number,
    private readonly eosTokenId: number,
    private readonly eosProbability: number,
    drawOffset = 0,
  ) {
    const seedLength = seedPromptLength(prompt.length, drawOffset);
    if (seedLength === null)
      throw new RangeError(`sim token stream: drawOffset must be an integer in [0, ${prompt.length}), got ${drawOffset}`);
    this.prng = new SeededPrng(mixSeed(temperature === 0 ? 0 : seed, seedLength === prompt.length ? prompt : prompt.slice(0, seedLength)));
    for (let i = 0; i < drawOffset; i++) this.next();
  }

  next(): number {
    // Draw both numbers every step so EOS on/off does not shift the text that precedes it.
    const eosDraw = this.prng.nextFloat();
    const span = SIM_LAST_PRINTABLE - SIM_FIRST_PRINTABLE + 1;
    const token = SIM_FIRST_PRINTABLE + (this.prng.nextU32() % span);
    return eosDraw < this.eosProbability ? this.eosTokenId : token;
  }
}

/** FNV-1a over both 32-bit halves of the seed and every prompt token id. */
export function mixSeed(seed: number, prompt: readonly number[]): number {
  let h = 0x811c9dc5;
  const mix = (v: number) => {
    for (let i = 0; i < 4; i++) h = Math.imul(h ^ ((v >>> (8 * i)) & 0xff), 0x01000193) >>> 0;
  };
  mix(seed >>> 0);
  mix(Math.floor(seed / 2 ** 32) >>> 0);
  mix(prompt.length);
  for (const t of prompt) mix(t);
  return h;
}
