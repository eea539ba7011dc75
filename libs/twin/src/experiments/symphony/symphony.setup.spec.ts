import { FIG15_RUN, measuredUntilMs, SYMPHONY_RUN, symphonyRuns } from './symphony.setup.js';

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

describe("Fig. 15's run: InferCept at imbalanceUsers measured imbalanceWindowMs after the warm-up", () => {
  const fig15Runs = (o: typeof SYMPHONY_RUN) => symphonyRuns(o, undefined).filter((r) => r.name === FIG15_RUN);

  it('runs once, on its own window, where the setup gives one', () => {
    const o = { ...SYMPHONY_RUN, imbalanceWindowMs: 300_000 };
    expect(fig15Runs(o)).toEqual([{ name: FIG15_RUN, system: 'infercept', users: o.imbalanceUsers, untilMs: o.warmMs + 300_000 }]);
  });

  it.each([
    ['no window', { ...SYMPHONY_RUN, imbalanceWindowMs: undefined }],
    ['no infercept among the systems', { ...SYMPHONY_RUN, systems: ['symphony', 'recompute'] }],
  ])('is left out with %s', (_, o) => expect(fig15Runs(o)).toEqual([]));
});
