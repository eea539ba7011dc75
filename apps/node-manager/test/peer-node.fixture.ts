// Test fixture (imported by specs only): a node's KV side — reference engine on the CPU, real
// host and SSD pools, the real ChunkTransfer gRPC server — without NATS.
import { ReferenceEngine } from '@mnemo/engine';
import { JsonLogger } from '@mnemo/service-kit';
import { ChunkTransferGrpcServer } from '../src/chunks/chunk-transfer.grpc-server.js';
import { FetchChunksUseCase } from '../src/chunks/fetch-chunks.use-case.js';
import type { NodeManagerConfig } from '../src/config/node-manager.config.js';
import type { KvStore } from '../src/kv-store/kv.store.js';
import { MODEL } from './conversation.fixture.js';
import { openStore, removeDir, scratchDir } from './kv-store.fixture.js';

export interface PeerNode {
  readonly engine: ReferenceEngine;
  readonly store: KvStore;
  readonly server: ChunkTransferGrpcServer;
  readonly address: string;
  close(): Promise<void>;
}

/** A node's KV side. `hostBytes` small pushes chunks to SSD only; `peerToken` makes its gRPC server require that token. */
export async function startPeerNode(opts: { kvBlocks?: number; hostBytes?: number; peerToken?: string } = {}): Promise<PeerNode> {
  const dir = await scratchDir('mnemo-peer-');
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
      await removeDir(dir);
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
  const store = await openStore(engine, dir, { hostBytes: opts.hostBytes ?? 8 * 1024 * 1024, extra: opts.extra });
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
