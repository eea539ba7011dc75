// A cluster that lets no one in: NATS over TLS from a private CA, one user per service (one per
// node) with only the subjects its role needs, and node ↔ node gRPC as mutual TLS. Every service
// still connects and an inference runs end to end; a client without credentials, a gateway
// publishing NODE_DOWN, a node subscribing to another node's subjects and a TLS-less gRPC peer
// are each refused (docs/security.md).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { chunkKeys, CHUNK_TOKENS } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, NodeDownSchema, PlanReplySchema, PlanRequestSchema, Subjects, nodeInferSubject } from '@mnemo/proto';
import { startGateway, type GatewayHandle } from '../../apps/gateway/src/app.js';
import { startNodeManager, type NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { startProfiler, type ProfilerHandle } from '../../apps/profiler/src/app.js';
import { ChunkPeerClient } from '../../apps/node-manager/src/peers/chunk-peer.client.js';
import { startScheduler, type SchedulerHandle } from '../../apps/scheduler/src/app.js';
import { inboxPrefix, makePrivateCa, natsUsers, startNats, type NatsRole } from '@mnemo/testkit';
import { scrape, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const PEER_TOKEN = 'itest-peer-token-0123456789';
const LAYERS = 8;
const ROW = 16;
const SEGMENT_BYTES = 2 * CHUNK_TOKENS * ROW * 4;
const NODES = ['lp-a', 'lp-b'];

describe('least-privilege NATS and TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-lp-'));
  const pki = makePrivateCa(dir, {
    nats: ['localhost', '127.0.0.1'],
    ...Object.fromEntries(NODES.map((n) => [n, ['localhost', '127.0.0.1']])),
  });
  // Another CA: a certificate that is well formed but not of this cluster.
  const stranger = makePrivateCa(join(dir, 'other'), { x: ['127.0.0.1'] });
  const { users, conf } = natsUsers({ nodes: NODES });
  let nats: Awaited<ReturnType<typeof startNats>>;
  let scheduler: SchedulerHandle;
  const nodes: NodeManagerHandle[] = [];
  let gateway: GatewayHandle;
  let profiler: ProfilerHandle;
  const open: NatsConnection[] = [];
  const as = (key: string, extra: Record<string, string> = {}) => ({
    NATS_URL: nats.url,
    NATS_USER: users[key]!.user,
    NATS_PASSWORD: users[key]!.password,
    NATS_TLS_CA: pki.ca,
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  });
  const client = async (key: string) => {
    // Each role reads replies on its own inbox prefix only, as the services do.
    const [role, nodeId] = key.split(':') as [NatsRole, string | undefined];
    const nc = await connect({
      servers: nats.url,
      user: users[key]!.user,
      pass: users[key]!.password,
      tls: { caFile: pki.ca },
      inboxPrefix: inboxPrefix(role, nodeId),
    });
    open.push(nc);
    return nc;
  };
  /** The first permission error the server reports on `nc` within `ms`, or null. */
  const violation = (nc: NatsConnection, ms = 2000) =>
    Promise.race([
      (async () => {
        for await (const s of nc.status()) if (s.type === 'error') return String(s.error);
        return null;
      })(),
      new Promise<null>((r) => setTimeout(() => r(null), ms).unref()),
    ]);

  beforeAll(async () => {
    nats = await startNats({ authorization: conf, tls: pki.certs.nats! });
    scheduler = await startScheduler(as('scheduler', { SCHEDULER_NODE_TIMEOUT_MS: '1500' }));
    for (const id of NODES) {
      nodes.push(
        await startNodeManager(
          as(`node:${id}`, {
            NODE_ID: id,
            NODE_ENGINE: 'sim',
            NODE_MODELS: MODEL,
            NODE_HEARTBEAT_MS: '200',
            NODE_KV_BLOCKS: '256',
            NODE_SIM_KV_BYTES: `${LAYERS}x${ROW}`,
            NODE_KV_HOST_POOL: '64MiB',
            NODE_KV_STORE: 'on',
            NODE_DATA_DIR: join(dir, id),
            NODE_KV_SSD_POOLS: `${join(dir, id, 'ssd.pool')}=64MiB`,
            NODE_KV_BANDWIDTHS: '10,2',
            NODE_PEER_TOKEN: PEER_TOKEN,
            NODE_GRPC_TLS_CA: pki.ca,
            NODE_GRPC_TLS_CERT: pki.certs[id]!.cert,
            NODE_GRPC_TLS_KEY: pki.certs[id]!.key,
          }),
        ),
      );
    }
    gateway = await startGateway(as('gateway', { GATEWAY_PORT: '0', GATEWAY_GRPC_PORT: '0' }));
    profiler = await startProfiler(as('profiler', { DATABASE_URL: process.env.DATABASE_URL ?? '', HTTP_PORT: '0' }));
    await waitFor(async () => (await scrape(scheduler.metricsPort, 'mnemo_scheduler_live_nodes')) === 2, 10_000, 'both nodes registered');
  });
  afterAll(async () => {
    for (const nc of open) await nc.close().catch(() => undefined);
    await gateway?.stop();
    await profiler?.stop();
    for (const n of nodes) await n.stop();
    await scheduler?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves an inference through every service, each on its own user over TLS', async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.httpPort}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: 'Hello there', max_tokens: 8, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
  });

  it("answers a node's plan request from the profiler, each on its own user", async () => {
    const node = await client('node:lp-a');
    const msg = await node.request(Subjects.PROFILER_PLAN, encodeMessage(PlanRequestSchema, { base: 'no-base', derived: 'no-derived' }), {
      timeout: 5000,
    });
    // No such pair: an answer (not_found), which is what the profiler's user may send back.
    expect(decodeMessage(PlanReplySchema, msg.data).error?.code).toBe('not_found');
  });

  it('refuses a client without credentials, with wrong ones, or without TLS trust', async () => {
    await expect(connect({ servers: nats.url, reconnect: false, timeout: 3000, tls: { caFile: pki.ca } })).rejects.toThrow(/Authorization/);
    await expect(
      connect({ servers: nats.url, user: 'gateway', pass: 'guess', reconnect: false, timeout: 3000, tls: { caFile: pki.ca } }),
    ).rejects.toThrow(/Authorization/);
    // The server's certificate is of the private CA: a client that does not trust it cannot even start.
    await expect(
      connect({ servers: nats.url, user: 'gateway', pass: users.gateway!.password, reconnect: false, timeout: 3000 }),
    ).rejects.toThrow(/certificate/);
    expect(readFileSync(pki.ca, 'utf8')).toContain('BEGIN CERTIFICATE');
  });

  it('refuses NODE_DOWN from the gateway user, and delivers the scheduler user’s', async () => {
    const listener = await client('gateway');
    const got: string[] = [];
    listener.subscribe(Subjects.NODE_DOWN, {
      callback: (_e, m) => {
        got.push(decodeMessage(NodeDownSchema, m.data).nodeId);
      },
    });
    await listener.flush();
    const gw = await client('gateway');
    const refused = violation(gw);
    const down = (nodeId: string) => encodeMessage(NodeDownSchema, { nodeId, bootId: 'itest', reason: 'itest' });
    gw.publish(Subjects.NODE_DOWN, down('forged'));
    await gw.flush();
    expect(await refused).toMatch(/Permissions Violation for Publish to "mnemo\.v1\.nodes\.down"/);
    const sched = await client('scheduler');
    sched.publish(Subjects.NODE_DOWN, down('control'));
    await sched.flush();
    await waitFor(async () => got.length > 0, 3000, 'the scheduler user’s NODE_DOWN');
    expect(got).toEqual(['control']);
  });

  it("refuses a node user's subscription to another node's subjects, and its own works", async () => {
    const a = await client('node:lp-a');
    const refused = violation(a);
    const snoop = a.subscribe(nodeInferSubject('lp-b'));
    await a.flush();
    expect(await refused).toMatch(/Permissions Violation for Subscription to "mnemo\.v1\.node\.lp-b\.infer"/);
    await expect(snoop.closed).resolves.toBeDefined();
    const own = a.subscribe('mnemo.v1.node.lp-a.probe', { max: 1 });
    await a.flush();
    const sched = await client('scheduler');
    const r = violation(sched, 500);
    // The scheduler may not publish arbitrary node subjects either: only the ones it drives.
    sched.publish('mnemo.v1.node.lp-a.probe', 'x');
    await sched.flush();
    expect(await r).toMatch(/Permissions Violation for Publish/);
    expect(own.getReceived()).toBe(0);
  });

  it('refuses a TLS-less gRPC peer, and one with a certificate of another CA; a node of the CA gets the KV', async () => {
    const prompt = Array.from({ length: 600 }, (_, i) => 32 + ((i * 19 + 7) % 90));
    const res = await fetch(`http://127.0.0.1:${gateway.httpPort}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt, max_tokens: 1, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    const keys = chunkKeys(MODEL, 'default', prompt);
    const pull = async (peer: ChunkPeerClient, address: string) => {
      const got: boolean[] = [];
      try {
        for await (const c of peer.fetch(address, keys, 0, 1, SEGMENT_BYTES)) got.push(c.payload !== undefined);
      } finally {
        peer.close();
      }
      return got;
    };
    const tls = (p: typeof pki, name: string) => ({
      ca: readFileSync(p.ca),
      cert: readFileSync(p.certs[name]!.cert),
      key: readFileSync(p.certs[name]!.key),
    });
    let holder: NodeManagerHandle | undefined;
    await waitFor(
      async () => {
        for (const n of nodes)
          if ((await pull(new ChunkPeerClient({ timeoutMs: 5000, token: PEER_TOKEN, tls: tls(pki, 'lp-a') }), n.grpcAddress))[0])
            holder = n;
        return holder !== undefined;
      },
      5000,
      'a node holding the prompt’s KV, pulled over mutual TLS',
    );
    expect(await pull(new ChunkPeerClient({ timeoutMs: 5000, token: PEER_TOKEN, tls: tls(pki, 'lp-b') }), holder!.grpcAddress)).toEqual([
      true,
      true,
    ]);
    // The right token is not enough without TLS, nor with a certificate the cluster's CA did not sign.
    expect(await pull(new ChunkPeerClient({ timeoutMs: 5000, token: PEER_TOKEN }), holder!.grpcAddress)).toEqual([false, false]);
    const foreign = { ...tls(stranger, 'x'), ca: readFileSync(pki.ca) };
    expect(await pull(new ChunkPeerClient({ timeoutMs: 5000, token: PEER_TOKEN, tls: foreign }), holder!.grpcAddress)).toEqual([
      false,
      false,
    ]);
  });
});
