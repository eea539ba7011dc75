import { expiredNodes, loadScore, pickLeastLoaded } from './least-loaded.policy.js';
import type { NodeLoad } from './node-load.js';
import { candidate } from '../testing/route.candidates.js';

const node = candidate;

describe(loadScore.name, () => {
  it.each([
    ['idle', node('a'), 0],
    ['running and waiting add', node('a', { running: 3, waiting: 2 }), 5],
    ['half-full KV', node('a', { kvUsage: 0.5 }), 2],
    ['kvUsage above 1 is clamped', node('a', { kvUsage: 7 }), 4],
    ['negative kvUsage is clamped', node('a', { kvUsage: -1 }), 0],
    ['NaN kvUsage counts as full', node('a', { kvUsage: NaN }), 4],
  ])('%s', (_name, n, expected) => {
    expect(loadScore(n)).toBe(expected);
  });
});

describe(pickLeastLoaded.name, () => {
  it.each<[string, NodeLoad[], string | null]>([
    ['no nodes', [], null],
    ['no node serves the model', [node('a', { models: ['other'] })], null],
    ['only node', [node('a', { running: 9 })], 'a'],
    ['fewer running wins', [node('a', { running: 2 }), node('b', { running: 1 })], 'b'],
    ['waiting counts like running', [node('a', { running: 1 }), node('b', { waiting: 2 })], 'a'],
    ['KV pressure breaks a queue tie', [node('a', { running: 1, kvUsage: 0.9 }), node('b', { running: 1, kvUsage: 0.1 })], 'b'],
    ['queue outweighs KV usage', [node('a', { kvUsage: 0.9 }), node('b', { running: 4 })], 'a'],
    ['exact tie → smallest nodeId, whatever the order', [node('n2'), node('n10'), node('n1')], 'n1'],
    ['tie broken by code units, not locale', [node('b'), node('B')], 'B'],
    ['skips a less loaded node without the model', [node('a', { models: ['x'] }), node('b', { running: 5 })], 'b'],
    ['multi-model node qualifies', [node('a', { models: ['x', 'm'], running: 1 }), node('b', { running: 2 })], 'a'],
  ])('%s', (_name, nodes, expected) => {
    expect(pickLeastLoaded(nodes, 'm')?.nodeId ?? null).toBe(expected);
  });
});

describe(expiredNodes.name, () => {
  const nodes = [node('fresh', { lastSeenMs: 9_500 }), node('edge', { lastSeenMs: 7_000 }), node('stale', { lastSeenMs: 6_999 })];

  it.each<[string, number, number, string[]]>([
    ['none expired', 9_000, 3_000, []],
    ['exactly at the timeout is alive', 10_000, 3_000, ['stale']],
    ['all expired, input order', 20_000, 3_000, ['fresh', 'edge', 'stale']],
    ['clock behind a heartbeat', 0, 3_000, []],
  ])('%s', (_name, now, timeout, expected) => {
    expect(expiredNodes(nodes, now, timeout)).toEqual(expected);
  });
});
