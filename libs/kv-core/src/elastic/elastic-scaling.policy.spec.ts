import { NO_STEP, scaleDown, scaleUp } from './elastic-scaling.policy.js';

const unit = { elements: 6144, masterBlocks: 2, workerBlocks: 3 };

describe('Algorithm 1', () => {
  it.each([
    // name, owned, demand tokens, expected step
    ['fits: nothing to do', 10, 160, NO_STEP],
    ['exactly fits', 10, 10 * 16, NO_STEP],
    ['one token over: a whole unit', 10, 10 * 16 + 1, { workerBlocks: 3, masterBlocks: 2 }],
    ['four blocks short: two units', 10, 14 * 16, { workerBlocks: 6, masterBlocks: 4 }],
    ['owns nothing', 0, 1, { workerBlocks: 3, masterBlocks: 2 }],
  ])('SCALEUP: %s', (_n, owned, tokens, step) => {
    expect(scaleUp(owned, 16, unit, tokens)).toEqual(step);
  });

  it.each([
    ['window needs everything', 10, 160, NO_STEP],
    ['window needs more than owned', 10, 400, NO_STEP],
    ['idle window: all whole units', 10, 0, { workerBlocks: 9, masterBlocks: 6 }],
    ['spare below one unit keeps it', 10, 8 * 16, NO_STEP],
    ['spare of exactly one unit', 10, 7 * 16, { workerBlocks: 3, masterBlocks: 2 }],
    ['partial block counts as a block', 10, 6 * 16 + 1, { workerBlocks: 3, masterBlocks: 2 }],
  ])('SCALEDOWN: %s', (_n, owned, windowMax, step) => {
    expect(scaleDown(owned, 16, unit, windowMax)).toEqual(step);
  });

  it.each([
    ['negative owned', -1, 16, 0],
    ['zero block tokens', 1, 0, 0],
    ['fractional demand', 1, 16, 1.5],
  ])('rejects %s', (_n, owned, bt, tokens) => {
    expect(() => scaleUp(owned, bt, unit, tokens)).toThrow(RangeError);
    expect(() => scaleDown(owned, bt, unit, tokens)).toThrow(RangeError);
  });
});
