import { PendingSwapIns } from './pending-swap-in.queue.js';
import { SwapInPolicy } from './swap-in.policy.js';

describe(PendingSwapIns.name, () => {
  const policy = new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 2 });

  it('names a swap-in once it has been pending longer than the policy allows', () => {
    const sut = new PendingSwapIns<string>(policy);
    sut.startIteration();
    sut.add('a');
    expect([sut.startIteration(), sut.startIteration(), sut.startIteration()]).toEqual([[], [], ['a']]);
  });

  it('forgets settled swap-ins and never asks to wait for them', () => {
    const sut = new PendingSwapIns<string>(policy);
    sut.add('a');
    sut.add('b');
    sut.settle('a');
    expect(sut.startIteration()).toEqual([]);
    expect(sut.size).toBe(1);
    expect(sut.oldest()).toBe('b');
    sut.settle('b');
    sut.dropSettled();
    expect([sut.size, sut.oldest()]).toEqual([0, undefined]);
  });

  it('names overdue swap-ins oldest first', () => {
    const sut = new PendingSwapIns<string>(policy);
    sut.add('old');
    sut.startIteration();
    sut.add('new');
    for (let i = 0; i < 2; i++) sut.startIteration();
    expect(sut.startIteration()).toEqual(['old', 'new']);
  });
});
