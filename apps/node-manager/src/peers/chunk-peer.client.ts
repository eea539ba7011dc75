import { credentials, type Client, type ClientReadableStream } from '@grpc/grpc-js';
import { crc32c } from '@mnemo/native-cuda';
import { loadGrpcServices } from '@mnemo/proto';

/** One key's answer from a peer: its verified payload, or a miss (not held, corrupt, truncated, or the stream broke). */
export interface PeerChunk {
  readonly key: string;
  /** `[layer][K|V][256][row]` for the requested layer range; undefined = miss. */
  readonly payload?: Float32Array;
}

interface ChunkDataWire {
  key: string;
  layerStart: number;
  layerEnd: number;
  payload: Buffer;
  crc32c: number;
  missing: boolean;
}

type ChunkTransferClient = Client & { FetchChunks(req: object, options?: { deadline?: number }): ClientReadableStream<ChunkDataWire> };

/** What pulling from peers did, for metrics. */
export interface PeerFetchCounters {
  /** Verified payload bytes received. */
  bytes: number;
  chunks: number;
  /** Keys that came back missing, corrupt, truncated or not at all. */
  misses: number;
  corrupt: number;
}

/**
 * Pulls KV chunks from other nodes over ChunkTransfer.FetchChunks. The stream is consumed with
 * `for await`, so a slow consumer pauses the HTTP/2 window and the peer's writes wait (flow
 * control end to end). Nothing a peer sends is trusted: a chunk is used only if it is the key
 * asked for, in order, not missing, exactly the expected size, and its CRC32C matches the bytes
 * received; anything else is a miss, and the caller recomputes — never wrong KV.
 */
export class ChunkPeerClient {
  readonly counters: PeerFetchCounters = { bytes: 0, chunks: 0, misses: 0, corrupt: 0 };
  private readonly clients = new Map<string, ChunkTransferClient>();

  constructor(private readonly timeoutMs = 30_000) {}

  /**
   * One answer per key, in order. `expectBytes` is the payload size of one key's layer range.
   * Never throws for a peer's fault: a broken or unreachable peer turns the rest into misses.
   */
  async *fetch(address: string, keys: readonly string[], layerStart: number, layerEnd: number, expectBytes: number): AsyncGenerator<PeerChunk> {
    let next = 0;
    const call = this.client(address).FetchChunks({ keys, layerStart, layerEnd }, { deadline: Date.now() + this.timeoutMs });
    try {
      for await (const d of call as AsyncIterable<ChunkDataWire>) {
        const key = keys[next++];
        if (key === undefined) break;
        const payload = this.verify(d, key, layerStart, layerEnd, expectBytes);
        if (payload) {
          this.counters.bytes += payload.byteLength;
          this.counters.chunks++;
        } else this.counters.misses++;
        yield { key, payload };
      }
    } catch {
      // Unreachable, reset, deadline, refused: what did not arrive is a miss.
    } finally {
      call.cancel();
    }
    for (; next < keys.length; next++) {
      this.counters.misses++;
      yield { key: keys[next]! };
    }
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private verify(d: ChunkDataWire, key: string, layerStart: number, layerEnd: number, expectBytes: number): Float32Array | undefined {
    if (d.missing || d.key !== key || d.layerStart !== layerStart || d.layerEnd !== layerEnd) return undefined;
    if (d.payload.byteLength !== expectBytes || crc32c(d.payload) !== d.crc32c >>> 0) {
      this.counters.corrupt++;
      return undefined;
    }
    // A fresh, aligned copy: the wire buffer may sit at any offset of a pooled allocation.
    const out = new Float32Array(expectBytes / 4);
    new Uint8Array(out.buffer).set(d.payload);
    return out;
  }

  private client(address: string): ChunkTransferClient {
    let c = this.clients.get(address);
    if (!c) {
      const { clients } = loadGrpcServices();
      // Chunks are large: lift grpc-js's 4 MiB receive cap (a 7B model's chunk is ~128 MiB of fp32).
      c = new clients.ChunkTransfer(address, credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 }) as unknown as ChunkTransferClient;
      this.clients.set(address, c);
    }
    return c;
  }
}
