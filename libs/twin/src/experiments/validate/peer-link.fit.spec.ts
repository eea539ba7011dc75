import { CHUNK_TOKENS, SERVING_SYSTEMS } from '@mnemo/kv-core';
import { measured, sessions, setup } from '../../../test/multiround.fixture.js';
import { summarizeRun } from '../../report/run.summary.js';
import { multiroundCluster } from '../../scenario/multiround.scenario.js';
import { TwinCluster } from '../../scenario/twin.cluster.js';
import { fitPeerLink } from './peer-link.fit.js';

/** The twin's symphony on the fixture at the fixture's own link: its wait per peer chunk. */
function unscaled() {
  const c = new TwinCluster(multiroundCluster(setup, SERVING_SYSTEMS.symphony, measured, { seed: 1, tenant: 'twin-peer-link' }), sessions);
  c.run();
  const r = summarizeRun(c);
  return { chunks: r.restored_tokens.from_peers / CHUNK_TOKENS, perChunk: r.blocked_ms / (r.restored_tokens.from_peers / CHUNK_TOKENS) };
}

describe(fitPeerLink.name, () => {
  const base = unscaled();

  it('the fixture restores from peers and waits on them (else nothing below is tested)', () => {
    expect(base.chunks).toBeGreaterThan(0);
    expect(base.perChunk).toBeGreaterThan(0);
  });

  it.each([
    ['live waits as the twin does: the link stays', 1, (s: number) => expect(s).toBe(1)],
    ['live waits 3× as long: the link slows', 3, (s: number) => expect(s).toBeGreaterThan(1.5)],
    ['live waits 0.7× as long: the link speeds up', 0.7, (s: number) => expect(s).toBeLessThan(0.9)],
  ])('%s', (_name, factor, expectScale) => {
    const live = { restored_tokens: 10 * CHUNK_TOKENS, blocked_ms: 10 * base.perChunk * factor };
    const fit = fitPeerLink(setup, measured, sessions, live);
    expectScale(fit.report.scale);
    expect(fit.report.converged).toBe(true);
    expect(fit.report.twin_blocked_ms_per_chunk / fit.report.live_blocked_ms_per_chunk).toBeGreaterThan(0.9);
    expect(fit.report.twin_blocked_ms_per_chunk / fit.report.live_blocked_ms_per_chunk).toBeLessThan(1.1);
    // Only the peer link moves: dispatch × scale, bandwidth ÷ scale.
    expect(fit.costs.links.peer.dispatchMs).toBeCloseTo(measured.links.peer.dispatchMs * fit.report.scale, 1);
    expect(fit.costs.links.hostLoad).toBe(measured.links.hostLoad);
  });

  it('refuses a calibration run that restored nothing from peers', () => {
    expect(() => fitPeerLink(setup, measured, sessions, { restored_tokens: 0, blocked_ms: 0 })).toThrow(/restored nothing from peers/);
  });
});
