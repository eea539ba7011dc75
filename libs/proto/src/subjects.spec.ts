import {
  Subjects,
  assertSubjectToken,
  isSubjectToken,
  nodeCancelSubject,
  nodeFlowSubject,
  nodeInferSubject,
  tokenizerSubject,
  toSubjectToken,
} from './subjects.js';

const SHA = 'ab'.repeat(32);
/** The fixed subjects (the per-node ones are functions of the node id). */
const fixed = Object.values(Subjects).filter((s): s is Extract<(typeof Subjects)[keyof typeof Subjects], string> => typeof s === 'string');
const perNode = (id: string) => [
  nodeInferSubject(id),
  nodeCancelSubject(id),
  nodeFlowSubject(id),
  Subjects.nodePrefetch(id),
  Subjects.nodeForget(id),
];

describe('subjects', () => {
  it('versions every subject under mnemo.v1', () => {
    for (const s of [...fixed, ...perNode('n1'), tokenizerSubject(SHA)]) expect(s).toMatch(/^mnemo\.v1\.[a-z0-9_.-]+$/i);
  });

  it('keeps subjects distinct', () => {
    const all = [...fixed, ...perNode('n1'), tokenizerSubject(SHA)];
    expect(new Set(all).size).toBe(all.length);
  });

  it.each([
    ['node-1', true],
    ['host_2-33', true],
    ['a.b', false],
    ['*', false],
    ['>', false],
    ['a b', false],
    ['', false],
  ])('isSubjectToken(%j) = %s', (s, ok) => {
    expect(isSubjectToken(s)).toBe(ok);
  });

  it('refuses node ids that would change the subject shape', () => {
    expect(() => nodeInferSubject('a.b')).toThrow(RangeError);
    expect(() => assertSubjectToken('x>')).toThrow(RangeError);
    expect(() => nodeFlowSubject('*')).toThrow(RangeError);
    expect(() => Subjects.nodePrefetch('a.b')).toThrow(RangeError);
    expect(() => Subjects.nodeForget('>')).toThrow(RangeError);
    expect(() => tokenizerSubject('AB'.repeat(32))).toThrow(RangeError);
    expect(() => tokenizerSubject('>')).toThrow(RangeError);
  });

  it('maps hostnames to tokens', () => {
    expect(toSubjectToken('gpu-7.cluster.local')).toBe('gpu-7-cluster-local');
    expect(toSubjectToken('')).toBe('_');
  });
});
