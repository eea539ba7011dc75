import { DEFAULT_WORKLOAD, fitTail, normalQuantile, sessionTokens, SHAREGPT_TAIL, workload, workloadStats } from './multiround.workload.js';

describe('multiround workload', () => {
  it.each<[number, number]>([
    [0.5, 0],
    [0.9, 1.2815515655446004],
    [0.99, 2.3263478740408408],
    [0.01, -2.3263478740408408],
    [0.001, -3.090232306167813],
  ])('normalQuantile(%s) = %s', (p, z) => {
    expect(normalQuantile(p)).toBeCloseTo(z, 6);
  });

  it('the fitted log-normal passes through both ShareGPT tail points', () => {
    const { median, sigma } = fitTail();
    for (const { tokens, share } of SHAREGPT_TAIL) expect(Math.log(tokens / median) / sigma).toBeCloseTo(normalQuantile(1 - share), 9);
  });

  it('200 sessions: 10 % and 1 % over the scaled tail points, none past the cap, ≈ 5.5 turns, 90 % of typed turns under 132 tokens', () => {
    const sessions = workload({ ...DEFAULT_WORKLOAD, sessions: 200 });
    const stats = workloadStats(sessions);
    expect(stats.tail.map((t) => t.share_over)).toEqual([expect.closeTo(0.1, 1), 0.01]);
    expect(Math.max(...sessions.map(sessionTokens))).toBeLessThanOrEqual(DEFAULT_WORKLOAD.maxSessionTokens);
    expect(stats.mean_turns).toBeGreaterThan(5);
    expect(stats.mean_turns).toBeLessThan(6);
    expect(stats.multi_turn_share).toBeCloseTo(0.75, 2);
    expect(stats.typed_user_turn_p90_tokens).toBeLessThan(132);
  });

  it('is seeded: the same options give the same sessions, another seed others', () => {
    const o = { ...DEFAULT_WORKLOAD, sessions: 20 };
    expect(workload(o)).toEqual(workload(o));
    expect(workload({ ...o, seed: 7 }).map(sessionTokens)).not.toEqual(workload(o).map(sessionTokens));
  });

  it('a long session grows over its turns: pasted material is spread, not all in the first prompt', () => {
    const longest = [...workload()].sort((a, b) => sessionTokens(b) - sessionTokens(a)).find((s) => s.turns.length > 2)!;
    const pasted = longest.turns.slice(1).reduce((a, t) => a + t.pasted, 0);
    expect(pasted).toBeGreaterThan(0);
    expect(longest.doc.length).toBeLessThan(sessionTokens(longest) - longest.system.length);
  });
});
