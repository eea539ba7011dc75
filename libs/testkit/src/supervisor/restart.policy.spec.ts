import { DEFAULT_RESTART_POLICY, restartDelay } from './restart.policy.js';

const P = { baseMs: 500, maxMs: 4000, maxRestarts: 3, windowMs: 60_000 };

describe('restartDelay', () => {
  it.each<[string, number[], number, number | null]>([
    ['first restart: the base delay', [], 100_000, 500],
    ['doubles with each recent restart', [99_000], 100_000, 1000],
    ['and again', [98_000, 99_000], 100_000, 2000],
    ['gives up after maxRestarts within the window', [97_000, 98_000, 99_000], 100_000, null],
    ['restarts older than the window are forgotten', [10_000, 20_000, 99_000], 100_000, 1000],
  ])('%s', (_n, restarts, now, expected) => {
    expect(restartDelay(restarts, now, P)).toBe(expected);
  });

  it('caps the delay', () => {
    expect(restartDelay([1, 2, 3, 4], 10, { ...P, maxRestarts: 10 })).toBe(4000);
  });

  it('has bounded defaults', () => {
    expect(DEFAULT_RESTART_POLICY.maxRestarts).toBeGreaterThan(0);
    expect(DEFAULT_RESTART_POLICY.maxMs).toBeLessThanOrEqual(60_000);
  });
});
