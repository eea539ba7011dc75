// Interoperability over real sockets: a node publishes its KV in vLLM's wire format (ZMQ PUB,
// msgpack EventBatch) that a plain ZMQ subscriber and msgpack decoder read; an external engine's
// vLLM-format stream (bytes laid out by hand from vLLM's schema) lands in the scheduler's KV
// directory and shows in the indexer API's /query answers, beside the node's own holdings.
import { decode } from '@msgpack/msgpack';
import { Publisher, Subscriber } from 'zeromq';
import { blockKeys, chunkKeys, tenantOf, vllmBlockHash } from '@mnemo/kv-core';
import { Cluster, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const prompt = (n: number, from = 0) => Array.from({ length: n }, (_, i) => 1 + ((from + i * 13) % 250));

/** One BlockStored batch as vLLM ≥ #42892 writes it, assembled byte by byte (msgpack spec). */
function vllmStoredBatch(ts: number, hashes: bigint[], parent: bigint | null, tokens: number[]): Buffer {
  const str = (s: string) => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)]);
  const u64 = (h: bigint) => {
    const b = Buffer.alloc(9);
    b[0] = 0xcf;
    b.writeBigUInt64BE(h, 1);
    return b;
  };
  const uint = (n: number) => (n < 128 ? Buffer.from([n]) : Buffer.from([0xcc, n]));
  const arr = (items: Buffer[]) =>
    Buffer.concat([
      items.length < 16 ? Buffer.from([0x90 | items.length]) : Buffer.from([0xdc, items.length >> 8, items.length & 0xff]),
      ...items,
    ]);
  const f64 = Buffer.alloc(9);
  f64[0] = 0xcb;
  f64.writeDoubleBE(ts, 1);
  const event = Buffer.concat([
    Buffer.from([0x88]),
    str('type'),
    str('BlockStored'),
    str('block_hashes'),
    arr(hashes.map(u64)),
    str('parent_block_hash'),
    parent === null ? Buffer.from([0xc0]) : u64(parent),
    str('token_ids'),
    arr(tokens.map(uint)),
    str('block_size'),
    Buffer.from([0x10]),
    str('lora_id'),
    Buffer.from([0xc0]),
    str('medium'),
    str('GPU'),
    str('lora_name'),
    Buffer.from([0xc0]),
  ]);
  return Buffer.concat([Buffer.from([0x93]), f64, arr([event]), Buffer.from([0x00])]);
}

const ADMIN_KEY = 'itest-indexer-admin';
const TENANT_KEY = 'sk-itest-tenant';

const query = async (port: number, path: string, body: unknown, key: string | null = ADMIN_KEY) => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
  return {
    status: r.status,
    body: (await r.json()) as {
      data?: Record<string, { longest_matched: number; GPU: number; CPU: number; DISK: number }>;
      error?: { code: string };
    },
  };
};

describe('vLLM-format KV events and the indexer API', () => {
  let cluster: Cluster | undefined;
  let external: Publisher | undefined;
  afterEach(async () => {
    external?.close();
    await cluster?.stop();
  });

  it("a node's events decode with a msgpack decoder into vLLM's layout, and an external engine's stream shows in /query", async () => {
    external = new Publisher({ linger: 0 });
    await external.bind('tcp://127.0.0.1:*');
    cluster = await Cluster.start({
      nodes: 0,
      schedulerEnv: {
        SCHEDULER_INDEXER: 'on',
        SCHEDULER_INDEXER_PORT: '0',
        SCHEDULER_INDEXER_ADMIN_KEYS: ADMIN_KEY,
        MNEMO_API_KEYS: TENANT_KEY,
        SCHEDULER_VLLM_SOURCES: `vllm-ext=${MODEL}@${external.lastEndpoint}`,
      },
    });
    const node = await cluster.addNode({
      NODE_VLLM_EVENTS: 'tcp://127.0.0.1:*',
      NODE_VLLM_EVENTS_REPLAY: 'tcp://127.0.0.1:*',
      NODE_VLLM_EVENTS_TOPIC: 'kv@mnemo',
    });
    await cluster.waitForLiveNodes(1);
    const indexerPort = cluster.schedulers[0]!.indexerPort!;

    // A plain ZMQ subscriber, as a vLLM-speaking router would connect.
    const sub = new Subscriber({ linger: 0, receiveTimeout: 10_000 });
    sub.connect(node.vllmEvents!.endpoint);
    sub.subscribe('kv@mnemo');
    await new Promise((r) => setTimeout(r, 300));
    const tokens = prompt(300);
    const run = await cluster.infer({
      tokens,
      chunkKeys: chunkKeys(MODEL, 'itest', tokens),
      sampling: { maxTokens: 1, temperature: 0, topP: 1, seed: 1n },
    });
    await run.done();
    run.close();
    const frames = await sub.receive();
    sub.close();
    expect(frames.map((f) => f.length).slice(0, 2)).toEqual([8, 8]);
    expect(frames[0]!.toString()).toBe('kv@mnemo');
    expect(frames[1]!.readBigInt64BE()).toBe(0n);
    const [ts, events] = decode(frames[2]!, { useBigInt64: true }) as [number, Array<Record<string, unknown>>];
    expect(typeof ts).toBe('number');
    const ours = blockKeys(MODEL, 'itest', tokens);
    expect(events[0]).toEqual({
      type: 'BlockStored',
      block_hashes: ours.slice(0, 16).map((k) => {
        const h = vllmBlockHash(k);
        return h <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(h) : h;
      }),
      parent_block_hash: null,
      token_ids: tokens.slice(0, 256),
      block_size: 16,
      lora_id: null,
      medium: 'GPU',
      lora_name: null,
    });

    // The node's chunk is in the directory: /query by its tokens (tenant itest) names the node.
    await waitFor(
      async () =>
        (await query(indexerPort, '/query', { model: MODEL, tenant: 'itest', token_ids: tokens })).body.data?.[node.nodeId]?.GPU === 256,
      5000,
      'the node in /query',
    );

    // An external engine: 20 blocks of its own hashes, in two batches chained by parent.
    const ext = prompt(320, 7);
    const hashes = Array.from({ length: 20 }, (_, i) => 0xfeed0000_00000000n + BigInt(i));
    let seq = 0n;
    const send = async (payload: Buffer) => {
      const s = Buffer.alloc(8);
      s.writeBigInt64BE(seq++);
      await external!.send(['', s, payload]);
    };
    await waitFor(
      async () => {
        seq = 0n; // a restarted stream each try (the SUB may join late): the scheduler resets the source
        await send(vllmStoredBatch(1.5, hashes.slice(0, 12), null, ext.slice(0, 192)));
        await send(vllmStoredBatch(1.75, hashes.slice(12), hashes[11]!, ext.slice(192)));
        await new Promise((r) => setTimeout(r, 100));
        return (await query(indexerPort, '/query', { model: MODEL, token_ids: ext })).body.data?.['vllm-ext']?.longest_matched === 320;
      },
      8000,
      "the external engine's blocks in /query",
    );
    const answer = await query(indexerPort, '/query', { model: MODEL, token_ids: ext });
    expect(answer.body.data).toEqual({ 'vllm-ext': { longest_matched: 320, GPU: 320, CPU: 0, DISK: 0 } });
    // By hash: its first chunk's key.
    const byHash = await query(indexerPort, '/query_by_hash', { model: MODEL, block_hash: [blockKeys(MODEL, 'default', ext)[15]] });
    expect(byHash.body.data).toEqual({ 'vllm-ext': { longest_matched: 256, GPU: 256, CPU: 0, DISK: 0 } });
    // Another model's query matches nothing; bad input is a 400 and changes nothing.
    expect((await query(indexerPort, '/query', { model: 'other', token_ids: ext })).body).toEqual({ data: {} });
    expect((await query(indexerPort, '/query', { model: MODEL, token_ids: 'x' })).status).toBe(400);
    expect((await query(indexerPort, '/query_by_hash', { model: MODEL, block_hash: ['nothex'] })).body.error?.code).toBe('invalid_request');

    // Access: no key, or a wrong one, is a 401 before anything is read.
    const itest = { model: MODEL, tenant: 'itest', token_ids: tokens };
    expect((await query(indexerPort, '/query', itest, null)).status).toBe(401);
    expect((await query(indexerPort, '/query', itest, 'guess')).body.error?.code).toBe('unauthenticated');
    // A tenant's key asking about another tenant's salt: 403, and no answer.
    const other = await query(indexerPort, '/query', itest, TENANT_KEY);
    expect([other.status, other.body.error?.code, other.body.data]).toEqual([403, 'permission_denied', undefined]);
    expect(
      (await query(indexerPort, '/query_by_hash', { model: MODEL, block_hash: [blockKeys(MODEL, 'default', ext)[15]] }, TENANT_KEY)).status,
    ).toBe(403);
    // Without `tenant` the key's own tenant is the scope: the same tokens match nothing held for itest.
    expect((await query(indexerPort, '/query', { model: MODEL, token_ids: tokens }, TENANT_KEY)).body).toEqual({ data: {} });
    expect((await query(indexerPort, '/query', { model: MODEL, tenant: tenantOf(TENANT_KEY), token_ids: tokens }, TENANT_KEY)).status).toBe(
      200,
    );
  });

  it('refuses to start the indexer without an admin key', async () => {
    await expect(Cluster.start({ nodes: 0, schedulerEnv: { SCHEDULER_INDEXER: 'on', SCHEDULER_INDEXER_PORT: '0' } })).rejects.toThrow(
      /SCHEDULER_INDEXER_ADMIN_KEYS/,
    );
  });
});
