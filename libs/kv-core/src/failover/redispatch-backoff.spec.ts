import { ErrorCode } from '../errors/error-code.enum.js';
import { redispatchDelay } from './redispatch-backoff.js';

const b = { firstDelayMs: 100, maxDelayMs: 1000 };

describe(redispatchDelay.name, () => {
  it.each<[string, string, number, number, number | null]>([
    ['no node yet: the first retry waits the first delay', ErrorCode.NoNodeAvailable, 0, 20_000, 100],
    ['each retry doubles the wait', ErrorCode.NoNodeAvailable, 2, 20_000, 400],
    ['the wait is capped', ErrorCode.NoNodeAvailable, 10, 20_000, 1000],
    ['a huge retry count stays capped', ErrorCode.NoNodeAvailable, 5000, 20_000, 1000],
    ['just room for the wait and as long again', ErrorCode.NoNodeAvailable, 0, 200, 100],
    ['too close to the deadline: give up', ErrorCode.NoNodeAvailable, 0, 199, null],
    ['a capped wait near the deadline: give up', ErrorCode.NoNodeAvailable, 9, 1500, null],
    ['a timeout spent the deadline: not waited out', ErrorCode.Timeout, 0, 20_000, null],
    ['a refusal is not transient', ErrorCode.ModelNotFound, 0, 20_000, null],
    ['an internal error is not transient', ErrorCode.Internal, 0, 20_000, null],
  ])('%s', (_name, code, retries, remaining, delay) => {
    expect(redispatchDelay(code, retries, remaining, b)).toBe(delay);
  });

  it.each<[string, number, { firstDelayMs: number; maxDelayMs: number }]>([
    ['a negative retry count', -1, b],
    ['a fractional retry count', 0.5, b],
    ['no first delay', 0, { firstDelayMs: 0, maxDelayMs: 10 }],
    ['a cap below the first delay', 0, { firstDelayMs: 100, maxDelayMs: 10 }],
  ])('refuses %s', (_name, retries, backoff) => {
    expect(() => redispatchDelay(ErrorCode.NoNodeAvailable, retries, 1000, backoff)).toThrow(RangeError);
  });
});
