import { runOnce } from './run-once.js';

describe(runOnce.name, () => {
  it('runs the action once however often and however concurrently it is called', async () => {
    let runs = 0;
    const sut = runOnce(async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 5));
    });
    const [a, b] = [sut(), sut()];
    expect(a).toBe(b);
    await Promise.all([a, b, sut()]);
    expect(runs).toBe(1);
  });

  it('shares a failure instead of retrying', async () => {
    let runs = 0;
    const sut = runOnce(async () => {
      runs++;
      throw new Error('boom');
    });
    await expect(sut()).rejects.toThrow('boom');
    await expect(sut()).rejects.toThrow('boom');
    expect(runs).toBe(1);
  });
});
