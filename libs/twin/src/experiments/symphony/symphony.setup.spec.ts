import { measuredUntilMs, SYMPHONY_RUN } from './symphony.setup.js';

describe('measuredUntilMs: a count below windowUsers measures for proportionally longer', () => {
  const o = { warmMs: 50_000, untilMs: 130_000, windowUsers: 256 };
  it.each([
    ['64 users: the 80 s window four times over', 64, 370_000],
    ['128 users: twice over', 128, 210_000],
    ['at windowUsers: the window as set', 256, 130_000],
    ['above it: never shortened', 1024, 130_000],
  ])('%s', (_, users, until) => expect(measuredUntilMs(o, users)).toBe(until));

  it('without windowUsers every count has one window', () => {
    expect(measuredUntilMs({ warmMs: 50_000, untilMs: 130_000 }, 64)).toBe(130_000);
  });

  it("the experiment's own setup stretches its smaller counts", () => {
    expect(measuredUntilMs(SYMPHONY_RUN, SYMPHONY_RUN.users[0]!)).toBeGreaterThan(SYMPHONY_RUN.untilMs);
  });
});
