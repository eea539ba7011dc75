import { ReservationBook, type Reservation } from './reservation.book.js';

const r = (id: string, over: Partial<Reservation> = {}): Reservation => ({
  id,
  tenant: 't',
  sessionId: `s-${id}`,
  model: 'm',
  nodeId: 'n1',
  expectedAtMs: 0,
  expiresAtMs: 1000,
  priority: 0,
  ...over,
});

describe(ReservationBook.name, () => {
  it('takes a reservation and finds it by id and by session', () => {
    const sut = new ReservationBook({ perTenant: 5, total: 10 });
    expect(sut.reserve(r('a'), 0)).toEqual({ ok: true });
    expect(sut.lookup('t', 'a', 0)).toMatchObject({ kind: 'live', reservation: { id: 'a' } });
    expect(sut.forSession('t', 's-a', 0)?.id).toBe('a');
    expect(sut.onNode('n1', 0)).toBe(1);
  });

  it.each<[string, number, number]>([
    ['counts as load until overdue', 300, 1],
    ['at the overdue limit still', 100 + 250, 1],
    ['overdue: no longer load, though still honoured', 351, 0],
  ])('a reservation expected at 100 (overdue after 250 ms): %s', (_n, now, load) => {
    const sut = new ReservationBook({ perTenant: 5, total: 10 }, 250);
    sut.reserve(r('a', { expectedAtMs: 100 }), 0);
    expect(sut.onNode('n1', now)).toBe(load);
    expect(sut.lookup('t', 'a', now).kind).toBe('live');
  });

  it.each<[string, number, string]>([
    ['live just before expiry', 999, 'live'],
    ['expired at its time', 1000, 'expired'],
    ['expired after', 5000, 'expired'],
  ])('%s', (_n, now, kind) => {
    const sut = new ReservationBook({ perTenant: 5, total: 10 });
    sut.reserve(r('a'), 0);
    expect(sut.lookup('t', 'a', now).kind).toBe(kind);
  });

  it('counts reservations that expired unreleased, once each; released ones never', () => {
    const sut = new ReservationBook({ perTenant: 5, total: 10 });
    sut.reserve(r('a'), 0);
    sut.reserve(r('b'), 0);
    sut.reserve(r('c', { expiresAtMs: 3000 }), 0);
    sut.release('b');
    expect(sut.expiredTotal).toBe(0);
    sut.sweep(1000);
    sut.lookup('t', 'a', 1500);
    expect(sut.expiredTotal).toBe(1);
    expect(sut.forSession('t', 's-c', 3000)).toBeUndefined();
    expect(sut.expiredTotal).toBe(2);
  });

  it('another tenant’s id reads as unknown, live or expired', () => {
    const sut = new ReservationBook({ perTenant: 5, total: 10 });
    sut.reserve(r('a'), 0);
    expect(sut.lookup('other', 'a', 0).kind).toBe('unknown');
    expect(sut.lookup('other', 'a', 2000).kind).toBe('unknown');
  });

  it('a new advisory for the session replaces the old one (not counted twice)', () => {
    const sut = new ReservationBook({ perTenant: 1, total: 10 });
    sut.reserve(r('a', { sessionId: 's' }), 0);
    const second = sut.reserve(r('b', { sessionId: 's', nodeId: 'n2' }), 0);
    expect(second).toMatchObject({ ok: true, replaced: { id: 'a' } });
    expect(sut.lookup('t', 'a', 0).kind).toBe('unknown');
    expect(sut.size).toBe(1);
    expect([sut.onNode('n1', 0), sut.onNode('n2', 0)]).toEqual([0, 1]);
  });

  it.each<[string, { perTenant: number; total: number }, Reservation[], Reservation, string]>([
    ['per-tenant limit', { perTenant: 2, total: 10 }, [r('a'), r('b')], r('c'), 'tenant_limit'],
    ['other tenants are not limited by it', { perTenant: 2, total: 10 }, [r('a'), r('b')], r('c', { tenant: 'u' }), 'ok'],
    ['total limit', { perTenant: 5, total: 2 }, [r('a'), r('b', { tenant: 'u' })], r('c', { tenant: 'v' }), 'full'],
    ['expired ones free their slot', { perTenant: 1, total: 10 }, [r('a', { expiresAtMs: 10 })], r('c'), 'ok'],
  ])('flood control: %s', (_n, limits, before, next, expected) => {
    const sut = new ReservationBook(limits);
    for (const x of before) expect(sut.reserve(x, 0).ok).toBe(true);
    const res = sut.reserve(next, 20);
    expect(res.ok ? 'ok' : res.refusal).toBe(expected);
  });

  it('release frees the slot and the node count', () => {
    const sut = new ReservationBook({ perTenant: 1, total: 10 });
    sut.reserve(r('a'), 0);
    expect(sut.release('a')?.id).toBe('a');
    expect(sut.release('a')).toBeUndefined();
    expect(sut.onNode('n1', 0)).toBe(0);
    expect(sut.reserve(r('b'), 0).ok).toBe(true);
  });

  it('remembers a bounded number of expired ids', () => {
    const sut = new ReservationBook({ perTenant: 100, total: 3 });
    for (let i = 0; i < 6; i++) {
      sut.reserve(r(`x${i}`, { expiresAtMs: i + 1 }), i);
    }
    sut.sweep(100);
    expect(sut.lookup('t', 'x0', 100).kind).toBe('unknown');
    expect(sut.lookup('t', 'x5', 100).kind).toBe('expired');
  });
});
