import { existsSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { freePort } from './free-port.js';
import { startNats } from './nats.server.js';
import { startPostgres } from './postgres.server.js';
import { redactUrl } from './redact-url.js';

describe('private servers (testkit infra)', () => {
  it.each([
    ['postgres://u:secret@h:5/db', 'postgres://u:***@h:5/db'],
    ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4222'],
    ['not a url with p4ss', '<unparsable URL>'],
  ])('redactUrl(%j) = %j', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('freePort returns a bindable port that is not a shared server port', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect([4222, 5432]).not.toContain(port);
  });

  it('startNats runs a private JetStream server and stop removes it', async () => {
    const sut = await startNats();
    try {
      expect(sut.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
      expect(sut.port).not.toBe(4222);
      const nc = await connect({ servers: sut.url });
      const sub = nc.subscribe('echo', {
        callback: (_e, m) => {
          m.respond(m.data);
        },
      });
      const reply = await nc.request('echo', new TextEncoder().encode('hi'), { timeout: 2000 });
      expect(new TextDecoder().decode(reply.data)).toBe('hi');
      expect(nc.info?.jetstream).toBe(true);
      sub.unsubscribe();
      await nc.close();
    } finally {
      await sut.stop();
    }
    expect(existsSync(sut.dir)).toBe(false);
    await expect(connect({ servers: sut.url, reconnect: false, timeout: 500 })).rejects.toThrow();
  });

  it('startNats with credentials refuses a client without them, and restart brings it back on the same port', async () => {
    const sut = await startNats({ user: 'mnemo', password: 'pw' });
    try {
      await expect(connect({ servers: sut.url, reconnect: false, timeout: 2000 })).rejects.toThrow(/Authorization/);
      await expect(connect({ servers: sut.url, user: 'mnemo', pass: 'wrong', reconnect: false, timeout: 2000 })).rejects.toThrow(
        /Authorization/,
      );
      const nc = await connect({ servers: sut.url, user: 'mnemo', pass: 'pw', maxReconnectAttempts: -1, reconnectTimeWait: 50 });
      const reconnected = (async () => {
        for await (const s of nc.status()) if (s.type === 'reconnect') return;
      })();
      const before = sut.pid();
      await sut.restart(100);
      expect(sut.pid()).not.toBe(before);
      await reconnected;
      const sub = nc.subscribe('echo', { callback: (_e, m) => void m.respond(m.data) });
      const reply = await nc.request('echo', new TextEncoder().encode('back'), { timeout: 5000 });
      expect(new TextDecoder().decode(reply.data)).toBe('back');
      sub.unsubscribe();
      await nc.close();
    } finally {
      await sut.stop();
    }
  });

  it('startPostgres runs a private server with database mnemo and stop removes it', async () => {
    const sut = await startPostgres();
    try {
      expect(sut.port).not.toBe(5432);
      const db = new pg.Client({ connectionString: sut.url });
      await db.connect();
      const r = await db.query('SELECT current_database() AS db');
      await db.end();
      expect(r.rows[0].db).toBe('mnemo');
    } finally {
      await sut.stop();
    }
    expect(existsSync(sut.dir)).toBe(false);
    const late = new pg.Client({ connectionString: sut.url, connectionTimeoutMillis: 500 });
    await expect(late.connect()).rejects.toThrow();
  }, 60_000);
});
