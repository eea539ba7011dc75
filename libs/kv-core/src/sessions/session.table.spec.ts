import { SessionTable } from './session.table.js';

const rec = (sessionId: string, nodeId = 'n1', tenant = 't') => ({ tenant, sessionId, model: 'm', nodeId, chunkKeys: ['k'], lastUsedMs: 0 });

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

  it.each([0, 2.5, -3])('refuses a bound of %p', (n) => expect(() => new SessionTable(n)).toThrow(RangeError));
});
