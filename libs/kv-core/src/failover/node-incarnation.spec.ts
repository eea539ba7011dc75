import { classifyBeat, type BeatVerdict } from './node-incarnation.js';

describe(classifyBeat.name, () => {
  it.each<[string, { bootId: string } | undefined, { bootId: string; accepting: boolean }, BeatVerdict]>([
    ['a new node joins', undefined, { bootId: 'b1', accepting: true }, { oldDown: false, membership: 'join' }],
    [
      'a new node that is already leaving is ignored',
      undefined,
      { bootId: 'b1', accepting: false },
      { oldDown: false, membership: 'none' },
    ],
    ['the same incarnation is refreshed', { bootId: 'b1' }, { bootId: 'b1', accepting: true }, { oldDown: false, membership: 'refresh' }],
    ['the same incarnation says goodbye', { bootId: 'b1' }, { bootId: 'b1', accepting: false }, { oldDown: false, membership: 'leave' }],
    [
      'another boot id is a restart: old down, new joins',
      { bootId: 'b1' },
      { bootId: 'b2', accepting: true },
      { oldDown: true, membership: 'join' },
    ],
    [
      'a restarted node already leaving: old down, nothing joins',
      { bootId: 'b1' },
      { bootId: 'b2', accepting: false },
      { oldDown: true, membership: 'none' },
    ],
    [
      'a node without boot ids is never restarted',
      { bootId: '' },
      { bootId: '', accepting: true },
      { oldDown: false, membership: 'refresh' },
    ],
    ['a boot id appearing is no restart', { bootId: '' }, { bootId: 'b2', accepting: true }, { oldDown: false, membership: 'refresh' }],
    ['a boot id disappearing is no restart', { bootId: 'b1' }, { bootId: '', accepting: true }, { oldDown: false, membership: 'refresh' }],
  ])('%s', (_name, known, beat, verdict) => {
    expect(classifyBeat(known, beat)).toEqual(verdict);
  });
});
