// A derived model's prefill on the node's real path, shared by the node-side DroidSpeak
// benchmarks: real KvStore pools (host + SSD), the E-cache tier, the peer-aware prompt store and
// ChunkTransfer gRPC on loopback. A plan is built the way the node builds it — base KV through the
// prompt store's restore plan (local tiers or a `kv_sources` peer), the E cache through
// ECacheTier.source — and the engine's prefill calls `load`/`loadE` inside the timed prefill, so
// the fetch is counted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkKeys, eCacheKeys } from '@mnemo/kv-core';
import { JsonLogger } from '@mnemo/service-kit';
import { KvStore } from '../../apps/node-manager/dist/kv-store/kv.store.js';
import { ECacheTier, eCacheModel } from '../../apps/node-manager/dist/droidspeak/e-cache.tier.js';
import { ChunkPeerClient } from '../../apps/node-manager/dist/peers/chunk-peer.client.js';
import { PeerAwarePromptStore } from '../../apps/node-manager/dist/peers/peer-aware.prompt-store.js';
import { ChunkTransferGrpcServer } from '../../apps/node-manager/dist/chunks/chunk-transfer.grpc-server.js';
import { FetchChunksUseCase } from '../../apps/node-manager/dist/chunks/fetch-chunks.use-case.js';

export const CHUNK = 256;
export const SALT = 'bench';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
let seq = 0;

/** A node's KV tiers in a fresh temporary directory (removed by `close`). */
export async function openNode(engine, base, { hostMiB = 128, ssdMiB = 512, dir } = {}) {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'mnemo-droid-'));
  const settings = {
    enabled: true,
    dataDir,
    hostBytes: hostMiB << 20,
    hostDevices: 1,
    ssdPools: [{ path: join(dataDir, 'ssd-0.pool'), bytes: ssdMiB << 20 }],
    bandwidths: [10e9, 2e9],
    ssdTtlMs: 3_600_000,
    ioBackend: 'auto',
    eventsMs: 50,
  };
  const store = await KvStore.open(
    settings,
    engine,
    () => undefined,
    () => undefined,
    [eCacheModel(base, engine.hiddenSize(base))],
  );
  return { dir: dataDir, store, settings };
}

/**
 * The shared peer client and a logger that keeps quiet. The per-chunk deadline's fixed part is
 * raised: here the peer serves from this same process on the same two busy cores, so a chunk
 * waits for the consumer's own prefill to yield — a hang that a peer on another machine never
 * shows. A fetch that still misses is the node's recompute (see derivedPrefillMs).
 */
export function peerClient() {
  return {
    peers: new ChunkPeerClient({ timeoutMs: 60_000, deadlineBaseMs: 10_000 }),
    logger: new JsonLogger('bench', 'error', () => undefined),
  };
}

/** Serves `store`'s chunks to peers over ChunkTransfer gRPC on loopback; returns its address and a stop function. */
export async function serveChunks(store, logger) {
  const server = new ChunkTransferGrpcServer(new FetchChunksUseCase(store), { NODE_GRPC_HOST: '127.0.0.1', NODE_GRPC_PORT: 0 }, logger);
  const address = await server.listen();
  return { address, stop: () => server.onApplicationShutdown() };
}

/** The base prefills `tokens` on a node: its KV written through to the tiers, its E caches at `eLayers` kept in the tier. */
export async function basePrefill(engine, base, tier, tokens, eLayers) {
  const id = `ds-node-base-${seq++}`;
  const [out] = await engine.prefill([
    { seqId: id, model: base, tokens, sampling: GREEDY, cacheSalt: SALT, ...(eLayers.length ? { captureE: eLayers } : {}) },
  ]);
  for (const l of eLayers) tier.put(base, chunkKeys(base, SALT, tokens), l, out.eCache.get(l), tokens.length);
  engine.release(id);
}

/** The `kv_sources` entry of a peer holding the base's KV for `tokens` and its E caches at `eLayer` (when not null). */
export function peerSource(base, tokens, until, eLayer, address) {
  const keys = chunkKeys(base, SALT, tokens);
  const eKeys = eLayer === null ? [] : eCacheKeys(keys, eLayer, Math.ceil(until / CHUNK));
  return [{ nodeId: 'peer', address, chunkKeys: [...keys, ...eKeys] }];
}

/**
 * A crossModel plan as the node builds it: base KV through `promptStore`'s restore plan, the E
 * cache at `eLayer` (null: the plan needs none) through `tier`, from the local tiers or `sources`.
 */
export function nodePlan({ base, promptStore, tier, tokens, pattern, eLayer, until, sources }) {
  return () => {
    const prompt = { model: base, chunkKeys: chunkKeys(base, SALT, tokens), promptTokens: tokens.length, ...(sources ? { sources } : {}) };
    const restore = promptStore.restorePlan(prompt, 0);
    if (!restore || restore.until !== until) throw new Error(`base KV not restorable through ${until} (got ${restore?.until})`);
    const e = eLayer === null ? undefined : tier.source(base, prompt.chunkKeys, eLayer, until, sources ?? []);
    if (eLayer !== null && !e) throw new Error(`E cache at layer ${eLayer} not available`);
    return {
      baseModel: base,
      pattern,
      until,
      load: (l) => restore.load(l),
      ...(e ? { loadE: () => e.load() } : {}),
      done: (ok) => restore.done?.(ok),
    };
  };
}

export const fallbacks = { peer_misses: 0 };

/**
 * One prefill of the derived model (with a plan builder: over the base's KV); returns ms. A
 * restore that fails with data_loss (a peer chunk past its deadline) is what the node then does:
 * the request recomputes, and both attempts are counted in the time (`fallbacks.peer_misses`).
 */
export async function derivedPrefillMs(engine, derived, tokens, plan) {
  const id = `ds-node-d-${seq++}`;
  const t0 = performance.now();
  let out;
  try {
    [out] = await engine.prefill([{ seqId: id, model: derived, tokens, sampling: GREEDY, ...(plan ? { crossModel: () => plan() } : {}) }]);
  } catch (e) {
    if (e?.code !== 'data_loss') throw e;
    fallbacks.peer_misses++;
  }
  engine.release(id);
  if (!out) return performance.now() - t0 + (await derivedPrefillMs(engine, derived, tokens));
  const ms = performance.now() - t0;
  if (plan && !out.crossModel) throw new Error('the engine declined the plan');
  return ms;
}

/** A peer node that has pulled nothing yet: its store, its prompt store and E tier over `peers`; `pools` as openNode's. */
export async function freshPeer(engine, base, peers, dOf, pools = { hostMiB: 64, ssdMiB: 128 }) {
  const node = await openNode(engine, base, pools);
  return {
    ...node,
    prompts: new PeerAwarePromptStore(node.store, node.store, peers),
    tier: new ECacheTier(node.store, peers, dOf),
    close: async () => {
      await node.store.close();
      rmSync(node.dir, { recursive: true, force: true });
    },
  };
}

export { ECacheTier };
