import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { Placement } from '../nats/scheduler.client.js';
import { redispatchUntilPlaced } from './redispatch.retry.js';

const placed: Placement = { nodeId: 'n2', attempt: 1 };
const fast = { firstDelayMs: 5, maxDelayMs: 20 };

/** A scheduler that fails with each of `errors` in turn, then places. */
function flaky(errors: unknown[]): { schedule: () => Promise<Placement>; calls: () => number } {
  let calls = 0;
  return {
    schedule: async () => {
      const e = errors[calls++];
      if (e) throw e;
      return placed;
    },
    calls: () => calls,
  };
}

const noNode = () => new MnemoError(ErrorCode.NoNodeAvailable, 'no scheduler is running');

describe(redispatchUntilPlaced.name, () => {
  it('waits out "no node" until a node takes the continuation', async () => {
    const s = flaky([noNode(), noNode(), noNode()]);
    const retries: Array<[string, number, number]> = [];
    const p = await redispatchUntilPlaced(s.schedule, Date.now() + 10_000, new AbortController().signal, (...r) => retries.push(r), fast);
    expect(p).toEqual(placed);
    expect(s.calls()).toBe(4);
    expect(retries).toEqual([
      [ErrorCode.NoNodeAvailable, 5, 0],
      [ErrorCode.NoNodeAvailable, 10, 1],
      [ErrorCode.NoNodeAvailable, 20, 2],
    ]);
  });

  it('throws any other error at once', async () => {
    const s = flaky([new MnemoError(ErrorCode.Timeout, 'the scheduler did not answer'), noNode()]);
    await expect(
      redispatchUntilPlaced(s.schedule, Date.now() + 10_000, new AbortController().signal, () => undefined, fast),
    ).rejects.toMatchObject({ code: ErrorCode.Timeout });
    expect(s.calls()).toBe(1);
  });

  it('throws a non-domain error at once', async () => {
    const s = flaky([new Error('bug')]);
    await expect(
      redispatchUntilPlaced(s.schedule, Date.now() + 10_000, new AbortController().signal, () => undefined, fast),
    ).rejects.toThrow('bug');
    expect(s.calls()).toBe(1);
  });

  it('gives up with the last "no node" when the deadline leaves no room', async () => {
    const s = flaky(Array.from({ length: 100 }, noNode));
    const t0 = Date.now();
    await expect(redispatchUntilPlaced(s.schedule, t0 + 120, new AbortController().signal, () => undefined, fast)).rejects.toMatchObject({
      code: ErrorCode.NoNodeAvailable,
    });
    expect(Date.now() - t0).toBeLessThan(120);
    expect(s.calls()).toBeGreaterThan(1);
  });

  it('stops waiting when the client leaves', async () => {
    const s = flaky(Array.from({ length: 100 }, noNode));
    const client = new AbortController();
    setTimeout(() => client.abort(), 30);
    const t0 = Date.now();
    await expect(
      redispatchUntilPlaced(s.schedule, t0 + 60_000, client.signal, () => undefined, { firstDelayMs: 10_000, maxDelayMs: 10_000 }),
    ).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(s.calls()).toBe(1);
  });
});
