// Test fixture (imported by specs only): a small multi-round cluster, its sessions and its costs.
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { Distribution } from '../src/core/distribution.js';
import { NO_OVERHEADS } from '../src/costs/overhead.port.js';
import type { MeasuredCosts, MultiroundSetup } from '../src/scenario/multiround.scenario.js';
import type { TwinSession } from '../src/workload/session.workload.js';

const text = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);
export const sessions: TwinSession[] = Array.from({ length: 12 }, (_, s) => ({
  id: `s${s}`,
  system: text(300, 1),
  doc: text(s % 3 === 0 ? 900 : 0, 1000 + s),
  turns: Array.from({ length: 3 }, (_, t) => ({
    user: text(30 + ((s * 7 + t) % 40), s * 100 + t),
    reply: 20,
    readMs: 150,
    typeMs: 300,
    r: ((s * 13 + t * 7) % 100) / 100,
  })),
}));

export const setup: MultiroundSetup = {
  nodes: 3,
  model: 'mnemo-medium',
  kvBlocks: 512,
  maxBatch: 8,
  maxContext: 16384,
  hostPoolBytes: 8 << 20,
  ssdPoolBytes: 16 << 20,
  heartbeatMs: 200,
  bandwidths: { host: 10, ssd: 2 },
  kvLayers: 8,
  kvBytesPerToken: 256,
  compute: {
    ...DEFAULT_SIM_COST,
    prefillPerTokenMs: 0.08,
    decodeBaseMs: 12,
    decodePerSeqMs: 0.1,
    decodePerKContextMs: 0.076,
    restorePerChunkMs: 2.8,
  },
  routing: { queueMsPerRequest: 40, moveMarginMs: 40, hostMsPerChunk: 1.4, ssdMsPerChunk: 5.5, peerMsPerChunk: 2.7 },
  users: 6,
  rampMs: 500,
};
export const link = { dispatchMs: 0.2, bytesPerMs: 1e5 };
export const measured: MeasuredCosts = {
  links: { hostLoad: link, peer: { dispatchMs: 3, bytesPerMs: 1e4 }, ssdRead: link, hostWrite: link, ssdWrite: link },
  overheads: { ...NO_OVERHEADS, natsMs: new Distribution([0.3, 0.5, 2]), timerLagMs: new Distribution([0.1, 1, 3]) },
};
