import { argmax, TokenSampler } from './token.sampler.js';

const logits = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i * 1.7) * 3);

describe(TokenSampler.name, () => {
  it('is greedy at temperature 0 (lowest id on ties)', () => {
    const sut = new TokenSampler({ temperature: 0, topP: 1, seed: 9 });
    expect(sut.sample(logits)).toBe(argmax(logits));
    expect(argmax(Float32Array.of(1, 3, 3))).toBe(1);
  });

  it('replays the same tokens for the same seed and differs for another seed', () => {
    const draw = (seed: number): number[] => {
      const s = new TokenSampler({ temperature: 1.2, topP: 0.95, seed });
      return Array.from({ length: 40 }, () => s.sample(logits));
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it.each([0, 1, 7, 39])('continued after %i draws, samples what the uninterrupted sampler samples next', (k) => {
    const whole = new TokenSampler({ temperature: 1.2, topP: 0.95, seed: 7 });
    const all = Array.from({ length: 40 }, () => whole.sample(logits));
    const continued = new TokenSampler({ temperature: 1.2, topP: 0.95, seed: 7, drawOffset: k });
    expect(Array.from({ length: 40 - k }, () => continued.sample(logits))).toEqual(all.slice(k));
  });

  it('top-p keeps only the nucleus', () => {
    const sharp = Float32Array.of(10, 9.9, 0, 0, 0, 0);
    const sut = new TokenSampler({ temperature: 1, topP: 0.5, seed: 1 });
    const seen = new Set(Array.from({ length: 200 }, () => sut.sample(sharp)));
    expect([...seen]).toEqual([0]);
    const wide = new TokenSampler({ temperature: 1, topP: 0.99, seed: 1 });
    expect(new Set(Array.from({ length: 200 }, () => wide.sample(sharp)))).toEqual(new Set([0, 1]));
  });

  it('follows the softmax distribution at topP 1', () => {
    const sut = new TokenSampler({ temperature: 1, topP: 1, seed: 3 });
    const l = Float32Array.of(Math.log(1), Math.log(3));
    let ones = 0;
    for (let i = 0; i < 4000; i++) ones += sut.sample(l);
    expect(ones / 4000).toBeGreaterThan(0.72);
    expect(ones / 4000).toBeLessThan(0.78);
  });

  it('rejects bad parameters', () => {
    expect(() => new TokenSampler({ temperature: -1, topP: 1, seed: 0 })).toThrow(RangeError);
    expect(() => new TokenSampler({ temperature: 1, topP: 0, seed: 0 })).toThrow(RangeError);
    expect(() => new TokenSampler({ temperature: 1, topP: 1, seed: 0, drawOffset: -1 })).toThrow(RangeError);
  });
});
