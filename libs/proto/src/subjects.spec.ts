import { Subjects, assertSubjectToken, isSubjectToken, nodeCancelSubject, nodeInferSubject, toSubjectToken } from './subjects.js';

describe('subjects', () => {
  it('versions every subject under mnemo.v1', () => {
    for (const s of [...Object.values(Subjects), nodeInferSubject('n1'), nodeCancelSubject('n1')]) expect(s).toMatch(/^mnemo\.v1\.[a-z0-9_.-]+$/i);
  });

  it('keeps subjects distinct', () => {
    const all = [...Object.values(Subjects), nodeInferSubject('n1'), nodeCancelSubject('n1')];
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
  });

  it('maps hostnames to tokens', () => {
    expect(toSubjectToken('gpu-7.cluster.local')).toBe('gpu-7-cluster-local');
    expect(toSubjectToken('')).toBe('_');
  });
});
