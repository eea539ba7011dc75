import { measured, sessions, setup } from '../../../test/multiround.fixture.js';
import { fitRequestPath, outsideNodesMeanMs, scaledRequestPath } from './request-path.fit.js';

describe(fitRequestPath.name, () => {
  const base = outsideNodesMeanMs(setup, measured, sessions);

  it('the fixture spends time outside the nodes (else nothing below is tested)', () => {
    expect(base).toBeGreaterThan(0);
  });

  it.each([
    ['live spends as long as the twin: the path stays', 1, (s: number) => expect(s).toBeCloseTo(1, 1)],
    ['live spends 2.5× as long: the path slows', 2.5, (s: number) => expect(s).toBeGreaterThan(1.8)],
    ['live spends 0.6× as long: the path speeds up', 0.6, (s: number) => expect(s).toBeLessThan(0.8)],
  ])('%s', (_name, factor, expectScale) => {
    const fit = fitRequestPath(setup, measured, sessions, base * factor);
    expectScale(fit.report.scale);
    expect(fit.report.converged).toBe(true);
    const { twin_outside_nodes_mean_ms: twin, live_outside_nodes_mean_ms: target } = fit.report;
    expect(twin! / target).toBeGreaterThan(0.95);
    expect(twin! / target).toBeLessThan(1.05);
    // Only the path outside the nodes moves: the hops and the scheduler scale, the links and the nodes' CPU stay.
    expect(fit.costs.overheads.scheduleMs).toBeCloseTo(measured.overheads.scheduleMs * fit.report.scale, 2);
    expect(fit.costs.overheads.natsMs.mean).toBeCloseTo(measured.overheads.natsMs.mean * fit.report.scale, 2);
    expect(fit.costs.overheads.prefillCpuMs).toBe(measured.overheads.prefillCpuMs);
    expect(fit.costs.links).toBe(measured.links);
  });

  it('scales every part of the path, the path timed whole included', () => {
    const c = scaledRequestPath(measured, 3);
    expect(c.overheads.clientMsPerKToken).toBeCloseTo(3 * measured.overheads.clientMsPerKToken, 9);
    const whole = measured.overheads.requestPathMs;
    if (whole) expect(c.overheads.requestPathMs!.mean).toBeCloseTo(3 * whole.mean, 6);
  });

  it.each([0, -1, NaN])('refuses a calibration run whose time outside the nodes is %p', (ms) => {
    expect(() => fitRequestPath(setup, measured, sessions, ms)).toThrow(/outside the nodes/);
  });
});
