import { SessionTable } from './session.table.js';

const rec = (sessionId: string, nodeId = 'n1', tenant = 't') => ({
  tenant,
  sessionId,
  model: 'm',
  nodeId,
  chunkKeys: ['k'],
  lastUsedMs: 0,
});

describe(SessionTable.name, () => {
  it('remembers the last node and counts requests', () => {
    const sut = new SessionTable(10);
    sut.record(rec('s', 'n1'));
    sut.record(rec('s', 'n2'));
    expect(sut.get('t', 's')).toMatchObject({ nodeId: 'n2', requests: 2 });
  });

  it('keeps tenants apart', () => {
    const sut = new SessionTable(10);
    sut.record(rec('s', 'n1', 'a'));
    expect(sut.get('b', 's')).toBeUndefined();
    expect(sut.delete('b', 's')).toBeUndefined();
    expect(sut.get('a', 's')).toBeDefined();
  });

  it('stays within its bound, forgetting the least recently used session', () => {
    const sut = new SessionTable(100);
    sut.record(rec('kept'));
    for (let i = 0; i < 1000; i++) {
      sut.record(rec(`s${i}`));
      if (i % 50 === 0) sut.record(rec('kept'));
    }
    expect(sut.size).toBe(100);
    expect(sut.evictions).toBe(901);
    expect(sut.get('t', 'kept')).toBeDefined();
    expect(sut.get('t', 's0')).toBeUndefined();
  });

  describe('extend (the node reports the KV a request left)', () => {
    const base = { tenant: 't', sessionId: 's', nodeId: 'n1', model: 'm', chunkKeys: ['a'], promptTokens: 300, lastUsedMs: 0 };
    const tail = { tenant: 't', sessionId: 's', nodeId: 'n1', model: 'm', chunkKeys: ['a', 'b'], partialKey: 'p', tokens: 544 };
    it.each([
      ['extends the record', {}, true],
      ['no partial chunk', { partialKey: undefined }, true],
      ['another node ran it', { nodeId: 'n2' }, false],
      ['another model', { model: 'x' }, false],
      ['another tenant', { tenant: 'u' }, false],
      ['fewer tokens than the prompt', { tokens: 299 }, false],
      ['fewer whole chunks', { chunkKeys: [] }, false],
      ['not a continuation of the prompt', { chunkKeys: ['z', 'b'] }, false],
    ])('%s', (_name, change, applies) => {
      const sut = new SessionTable(10);
      sut.record(base);
      const t = { ...tail, ...change } as typeof tail;
      expect(sut.extend(t)).toBe(applies);
      const got = sut.get('t', 's')!;
      if (applies) expect(got).toMatchObject({ chunkKeys: t.chunkKeys, promptTokens: t.tokens, requests: 1 });
      else expect(got).toMatchObject({ chunkKeys: ['a'], promptTokens: 300 });
      expect(got.partialKey).toBe(applies ? t.partialKey : undefined);
    });

    it('is not a use (LRU order stays) and a new request forgets the partial chunk', () => {
      const sut = new SessionTable(2);
      sut.record(base);
      sut.record({ ...base, sessionId: 'other' });
      expect(sut.extend(tail)).toBe(true);
      sut.record({ ...base, sessionId: 'third' });
      expect(sut.get('t', 's')).toBeUndefined();
      const again = new SessionTable(2);
      again.record(base);
      again.extend(tail);
      again.record({ ...base, chunkKeys: ['a', 'b'], promptTokens: 600 });
      expect(again.get('t', 's')?.partialKey).toBeUndefined();
    });

    it('ignores an unknown session', () => expect(new SessionTable(2).extend(tail)).toBe(false));
  });

  it.each([0, 2.5, -3])('refuses a bound of %p', (n) => expect(() => new SessionTable(n)).toThrow(RangeError));
});
