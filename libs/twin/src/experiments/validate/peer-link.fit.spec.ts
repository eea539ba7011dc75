import { CHUNK_TOKENS } from '@mnemo/kv-core';
import { measured, sessions, setup } from '../../../test/multiround.fixture.js';
import { fitPeerLink, peerWaitPerChunk } from './peer-link.fit.js';

describe(fitPeerLink.name, () => {
  const base = { perChunk: peerWaitPerChunk(setup, measured, sessions) };

  it('the fixture restores from peers and waits on them (else nothing below is tested)', () => {
    expect(base.perChunk).toBeGreaterThan(0);
  });

  it.each([
    ['live waits as the twin does: the link stays', 1, (s: number) => expect(s).toBe(1)],
    ['live waits 3× as long: the link slows', 3, (s: number) => expect(s).toBeGreaterThan(1.5)],
    ['live waits 0.7× as long: the link speeds up', 0.7, (s: number) => expect(s).toBeLessThan(0.9)],
  ])('%s', (_name, factor, expectScale) => {
    const live = { restored_tokens: 10 * CHUNK_TOKENS, blocked_ms: 10 * base.perChunk * factor };
    const fit = fitPeerLink(setup, measured, sessions, live);
    expectScale(fit.report.scale!);
    expect(fit.report.converged).toBe(true);
    const { twin_blocked_ms_per_chunk: twin, live_blocked_ms_per_chunk: target, scale } = fit.report;
    expect(twin! / target!).toBeGreaterThan(0.9);
    expect(twin! / target!).toBeLessThan(1.1);
    // Only the peer link moves: dispatch × scale, bandwidth ÷ scale.
    expect(fit.costs.links.peer.dispatchMs).toBeCloseTo(measured.links.peer.dispatchMs * scale!, 1);
    expect(fit.costs.links.hostLoad).toBe(measured.links.hostLoad);
  });

  it('refuses a calibration run that restored nothing from peers', () => {
    expect(() => fitPeerLink(setup, measured, sessions, { restored_tokens: 0, blocked_ms: 0 })).toThrow(/restored nothing from peers/);
  });
});
