// Redis as a remote KV store baseline (LMCache's Redis backend: one value per chunk), through the
// official client (node-redis) at its best: one connection per client, values as Buffers (no
// string decoding), a restore's GETs pipelined. Two ways of pipelining are timed in every round
// and the faster is the baseline: auto-pipelining (every GET issued in the same tick) and an
// explicit pipeline (`multi().execAsPipeline()`, no MULTI/EXEC). The server: REDIS_URL, or a
// private `redis-server` on a free loopback port with persistence off.
import { spawn } from 'node:child_process';
import { createClient, RESP_TYPES } from 'redis';
import { freePort } from '@mnemo/testkit';
import { timed } from './tier.store.mjs';

async function startServer(dir) {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {}, source: 'REDIS_URL' };
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  // A bench that dies must not leave its private server behind.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const failed = new Promise((_, reject) => child.once('error', reject));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = createClient({ url, socket: { reconnectStrategy: false } });
    probe.on('error', () => {});
    try {
      await Promise.race([probe.connect(), failed]);
      await probe.close();
      return {
        url,
        stop: async () => {
          process.off('exit', reap);
          child.kill('SIGTERM');
        },
        source: 'private redis-server',
      };
    } catch (e) {
      if (e?.code === 'ENOENT') throw new Error('redis-server not installed (apt-get install redis-server) and REDIS_URL not set');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not accept connections');
}

/** @param {{ dir: string, chunkBytes: number, chunks: number }} o */
export async function openRedisBaseline(o) {
  const server = await startServer(o.dir);
  // The client's default 5 s command timeout is for small values; a restore's GETs of 32 MiB
  // values can take longer than that on a loaded machine.
  const client = createClient({
    url: server.url,
    socket: { noDelay: true, reconnectStrategy: false },
    commandOptions: { timeout: 300_000 },
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  client.on('error', () => {}); // surfaced by the command that fails
  try {
    await client.connect();
  } catch (e) {
    await server.stop();
    throw e;
  }
  const payload = Buffer.alloc(o.chunkBytes, 5);
  const keys = Array.from({ length: o.chunks }, (_, i) => `mnemo-bench:${i}`);
  const check = (got) => {
    if (got.length !== keys.length || got.some((g) => !Buffer.isBuffer(g) || g.length !== o.chunkBytes))
      throw new Error('redis returned a missing or short value');
  };
  return {
    source: server.source,
    settings:
      'official node-redis client, one connection, Buffer replies, GETs pipelined (auto-pipelining and multi().execAsPipeline(), the faster per round)',
    put: () => timed(() => Promise.all(keys.map((k) => client.set(k, payload)))),
    /** Seconds for each way of pipelining one restore's GETs. */
    get: async () => {
      const auto = await timed(async () => check(await Promise.all(keys.map((k) => client.get(k)))));
      const pipeline = await timed(async () => {
        const m = client.multi();
        for (const k of keys) m.get(k);
        check(await m.execAsPipeline());
      });
      return { auto, pipeline };
    },
    close: async () => {
      await client.close().catch(() => client.destroy());
      await server.stop();
    },
  };
}
