import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Server, status, type ServerWritableStream } from '@grpc/grpc-js';
import { errorStatus, isMnemoError } from '@mnemo/kv-core';
import { loadGrpcServices } from '@mnemo/proto';
import { JsonLogger } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { advertisedAddress } from './advertised.address.js';
import { FetchChunksUseCase } from './fetch-chunks.use-case.js';
import { peerServerCredentials } from '../peers/peer.tls.js';

interface FetchChunksCall {
  keys: string[];
  layerStart: number;
  layerEnd: number;
}

/**
 * gRPC endpoint for node ↔ node chunk transfer on NODE_GRPC_HOST:NODE_GRPC_PORT; maps each call
 * to the use case. With NODE_PEER_TOKEN set, a call must carry it as a bearer token; with
 * NODE_GRPC_TLS_* set, the connection is mutual TLS (a peer without a certificate of the CA is refused).
 */
@Injectable()
export class ChunkTransferGrpcServer implements OnModuleInit, OnApplicationShutdown {
  private server?: Server;
  /** host:port advertised in heartbeats; empty until listening. */
  address = '';

  constructor(
    @Inject(FetchChunksUseCase) private readonly fetchChunks: FetchChunksUseCase,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  /** Module init completes before any bootstrap hook, so the first heartbeat already carries the address. */
  async onModuleInit(): Promise<void> {
    await this.listen();
  }

  async listen(): Promise<string> {
    const server = new Server();
    server.addService(loadGrpcServices().ChunkTransfer, {
      FetchChunks: (call: ServerWritableStream<FetchChunksCall, unknown>) => void this.onFetch(call),
    });
    const host = this.config.NODE_GRPC_HOST!;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${this.config.NODE_GRPC_PORT}`, peerServerCredentials(this.config.peerTls), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    this.server = server;
    this.address = advertisedAddress(this.config.NODE_GRPC_ADVERTISE, host, port);
    return this.address;
  }

  async onApplicationShutdown(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    // In-flight streams get a moment to finish, then are cut.
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        s.forceShutdown();
        resolve();
      }, 1000);
      s.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  /** With NODE_PEER_TOKEN set, only callers presenting it get KV: the chunks are tenants' data. */
  private authorized(call: ServerWritableStream<FetchChunksCall, unknown>): boolean {
    const token = this.config.NODE_PEER_TOKEN;
    if (!token) return true;
    const got = Buffer.from(String(call.metadata.get('authorization')[0] ?? ''));
    const want = Buffer.from(`Bearer ${token}`);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  private async onFetch(call: ServerWritableStream<FetchChunksCall, unknown>): Promise<void> {
    if (!this.authorized(call)) {
      this.logger.emit('warn', 'FetchChunks refused: missing or wrong peer token', { peer: call.getPeer() });
      call.emit('error', { code: status.UNAUTHENTICATED, details: 'a valid peer token is required (NODE_PEER_TOKEN)' });
      return;
    }
    try {
      const { keys = [], layerStart = 0, layerEnd = 0 } = call.request;
      this.fetchChunks.validate(keys, layerStart, layerEnd);
      for await (const chunk of this.fetchChunks.execute(keys, layerStart, layerEnd)) {
        if (call.cancelled) return;
        // Flow control: a full HTTP/2 window makes write() return false; wait for the peer to read.
        if (!call.write(chunk))
          await new Promise<void>((resolve) => {
            const done = () => {
              call.off('drain', done);
              call.off('cancelled', done);
              resolve();
            };
            call.on('drain', done);
            call.on('cancelled', done);
          });
      }
      call.end();
    } catch (e) {
      // grpc-js turns an 'error' event with a code into the call's status.
      if (isMnemoError(e)) {
        call.emit('error', { code: errorStatus(e.code).grpc, details: e.message });
      } else {
        this.logger.emit('error', 'FetchChunks failed', { err: e instanceof Error ? e : String(e) });
        call.emit('error', { code: status.INTERNAL, details: 'internal error' });
      }
    }
  }
}
