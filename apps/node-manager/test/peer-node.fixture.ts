// Test fixture (imported by specs only): a node's KV side — reference engine on the CPU, real
// host and SSD pools, the real ChunkTransfer gRPC server — without NATS.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkBlockKeys, chunkKeys } from '@mnemo/kv-core';
import { ReferenceEngine, type PrefillInput } from '@mnemo/engine';
import { JsonLogger } from '@mnemo/service-kit';
import { ChunkTransferGrpcServer } from '../src/chunks/chunk-transfer.grpc-server.js';
import { FetchChunksUseCase } from '../src/chunks/fetch-chunks.use-case.js';
import type { NodeManagerConfig } from '../src/config/node-manager.config.js';
import { KvStore, type StoredPrompt } from '../src/kv-store/kv.store.js';

export const MODEL = 'mnemo-tiny';
export const GREEDY = { temperature: 0, topP: 1, seed: 0 };
export const toks = (n: number, salt: number): number[] => Array.from({ length: n }, (_, i) => (i * 31 + salt * 17 + 3) % 250);
export const bits = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length);

export interface PeerNode {
  readonly engine: ReferenceEngine;
  readonly store: KvStore;
  readonly server: ChunkTransferGrpcServer;
  readonly address: string;
  close(): Promise<void>;
}

/** A node's KV side. `hostBytes` small pushes chunks to SSD only; `peerToken` makes its gRPC server require that token. */
export async function startPeerNode(opts: { kvBlocks?: number; hostBytes?: number; peerToken?: string } = {}): Promise<PeerNode> {
  const dir = await mkdtemp(join(tmpdir(), 'mnemo-peer-'));
  const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: opts.kvBlocks ?? 256 });
  const { store, server, address, close } = await servePeerStore(engine, dir, opts);
  return {
    engine,
    store,
    server,
    address,
    close: async () => {
      await close();
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A KV store in `dir` (host memory, one 16 MiB SSD pool) behind the real ChunkTransfer gRPC server,
 * listening on a free port. `extra`: tier-only models (DroidSpeak E caches). `close` stops the
 * server, then the store; the engine is the caller's.
 */
export async function servePeerStore(
  engine: ReferenceEngine,
  dir: string,
  opts: { hostBytes?: number; peerToken?: string; extra?: Parameters<typeof KvStore.open>[4] } = {},
): Promise<{ store: KvStore; server: ChunkTransferGrpcServer; address: string; close(): Promise<void> }> {
  const store = (await KvStore.open(
    {
      enabled: true,
      dataDir: dir,
      hostBytes: opts.hostBytes ?? 8 * 1024 * 1024,
      hostDevices: 1,
      ssdPools: [{ path: join(dir, 'ssd-0.pool'), bytes: 16 * 1024 * 1024 }],
      bandwidths: [10e9, 2e9],
      ssdTtlMs: 3_600_000,
      ioBackend: 'auto',
      eventsMs: 50,
    },
    engine,
    () => undefined,
    () => undefined,
    opts.extra,
  ))!;
  const config = {
    NODE_GRPC_HOST: '127.0.0.1',
    NODE_GRPC_PORT: 0,
    ...(opts.peerToken ? { NODE_PEER_TOKEN: opts.peerToken } : {}),
  } as NodeManagerConfig;
  const server = new ChunkTransferGrpcServer(new FetchChunksUseCase(store), config, new JsonLogger('test', 'error', () => undefined));
  const address = await server.listen();
  return {
    store,
    server,
    address,
    close: async () => {
      await server.onApplicationShutdown();
      await store.close();
    },
  };
}

export function storedPrompt(tokens: readonly number[], tenant = 't'): StoredPrompt {
  const keys = chunkKeys(MODEL, tenant, tokens);
  return { model: MODEL, chunkKeys: keys, promptTokens: tokens.length, blockKeys: (c) => chunkBlockKeys(MODEL, tenant, tokens, keys, c) };
}

/** Prefills (restoring through `restore` when given) and decodes greedily; returns the tokens and the whole KV. */
export async function converse(
  engine: ReferenceEngine,
  seqId: string,
  tokens: number[],
  n: number,
  restore?: PrefillInput['restore'],
): Promise<{ out: number[]; kv: Float32Array; cached: number; restored: number }> {
  const input: PrefillInput = { seqId, model: MODEL, tokens, sampling: GREEDY, cacheSalt: 't', restore };
  const [first] = await engine.prefill([input]);
  const out = [first!.token];
  while (out.length < n) out.push((await engine.decode([seqId]))[0]!.token);
  const kv = engine.exportKv(seqId, { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: tokens.length + n - 1 });
  engine.release(seqId);
  return { out, kv, cached: first!.cachedTokens ?? 0, restored: first!.restoredTokens ?? 0 };
}
