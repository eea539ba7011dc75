import { Metadata, type Client, type ClientReadableStream } from '@grpc/grpc-js';
import { crc32c } from '@mnemo/native-cuda';
import { LinkSpeed } from '@mnemo/kv-core';
import { loadGrpcServices } from '@mnemo/proto';
import type { PeerTls } from '../config/peer-tls.settings.js';
import type { PeerChunk } from '../kv-store/chunk-store.port.js';
import { peerChannelCredentials } from './peer.tls.js';

interface ChunkDataWire {
  key: string;
  layerStart: number;
  layerEnd: number;
  payload: Buffer;
  crc32c: number;
  missing: boolean;
}

type ChunkTransferClient = Client & {
  FetchChunks(req: object, metadata: Metadata, options?: { deadline?: number }): ClientReadableStream<ChunkDataWire>;
};

/** What pulling from peers did, for metrics. */
export interface PeerFetchCounters {
  /** Verified payload bytes received. */
  bytes: number;
  chunks: number;
  /** Keys that came back missing, corrupt, truncated or not at all. */
  misses: number;
  corrupt: number;
  /** Fetches given up because a chunk did not arrive within its deadline (a hung or very slow peer). */
  deadlines: number;
  /** Idle channels closed. */
  evicted: number;
}

export interface ChunkPeerOptions {
  /** Longest a whole FetchChunks stream may take (NODE_PEER_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  /** Sent as `authorization: Bearer <token>` on every call (NODE_PEER_TOKEN); the peer refuses calls without it. */
  readonly token?: string;
  /** Node ↔ node mutual TLS (NODE_GRPC_TLS_*): the peer is verified against the CA, and this node's certificate presented. */
  readonly tls?: PeerTls;
  /** Per-chunk deadline (see LinkSpeed): fixed part, ms. */
  readonly deadlineBaseMs?: number;
  /** A channel unused this long is closed. */
  readonly idleMs?: number;
  /** Channels kept at most; the least recently used idle one goes first. */
  readonly maxChannels?: number;
  readonly now?: () => number;
}

/** Bytes of a ChunkData message besides its payload: key, layer range, CRC, flags and framing. */
export const CHUNK_MESSAGE_OVERHEAD = 1024;

interface Channel {
  readonly client: ChunkTransferClient;
  lastUsedMs: number;
  active: number;
}

/**
 * Pulls KV chunks from other nodes over ChunkTransfer.FetchChunks. The stream is consumed with
 * `for await`, so a slow consumer pauses the HTTP/2 window and the peer's writes wait (flow
 * control end to end). Nothing a peer sends is trusted: a chunk is used only if it is the key
 * asked for, in order, not missing, exactly the expected size, and its CRC32C matches the bytes
 * received; anything else is a miss, and the caller recomputes — never wrong KV.
 *
 * Bounded on every axis a peer could abuse: a message longer than the expected payload is cut
 * off by grpc-js before it is buffered (one channel per peer and message size, the size set as
 * its receive limit); a peer that hangs, rather than dies, stalls a fetch only until the next
 * chunk's deadline, derived from its size and the link speed measured to that peer (LinkSpeed),
 * after which the rest are misses; channels idle for `idleMs` are closed, and at most
 * `maxChannels` are kept.
 */
export class ChunkPeerClient {
  readonly counters: PeerFetchCounters = { bytes: 0, chunks: 0, misses: 0, corrupt: 0, deadlines: 0, evicted: 0 };
  /** Verified payload bytes received per peer address (the node's inbound links); past 4 × maxChannels peers, under `other`. */
  readonly bytesByPeer = new Map<string, number>();
  private readonly channels = new Map<string, Channel>();
  private readonly speeds = new Map<string, LinkSpeed>();
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly maxChannels: number;
  private readonly now: () => number;
  private readonly sweep: NodeJS.Timeout;

  private readonly options: ChunkPeerOptions;

  /** A number is the whole stream's timeout (NODE_PEER_TIMEOUT_MS) with every other option at its default. */
  constructor(options: ChunkPeerOptions | number = {}) {
    options = typeof options === 'number' ? { timeoutMs: options } : options;
    this.options = options;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.idleMs = options.idleMs ?? 60_000;
    this.maxChannels = options.maxChannels ?? 64;
    this.now = options.now ?? Date.now;
    this.sweep = setInterval(() => this.evictIdle(), Math.max(1000, this.idleMs / 2));
    this.sweep.unref();
  }

  /** Open channels (for tests and metrics). */
  get openChannels(): number {
    return this.channels.size;
  }

  /**
   * One answer per key, in order. `expectBytes` is the payload size of one key's layer range.
   * Never throws for a peer's fault: a broken, hung or unreachable peer turns the rest into misses.
   */
  async *fetch(
    address: string,
    keys: readonly string[],
    layerStart: number,
    layerEnd: number,
    expectBytes: number,
  ): AsyncGenerator<PeerChunk> {
    let next = 0;
    const channel = this.channel(address, expectBytes + CHUNK_MESSAGE_OVERHEAD);
    const speed = this.speed(address);
    const metadata = new Metadata();
    if (this.options.token) metadata.set('authorization', `Bearer ${this.options.token}`);
    const call = channel.client.FetchChunks({ keys, layerStart, layerEnd }, metadata, { deadline: Date.now() + this.timeoutMs });
    channel.active++;
    let hung: NodeJS.Timeout | undefined;
    let timedOut = false;
    let since = this.now();
    // Each chunk must arrive within its own deadline; past it the call is cancelled and the rest are misses.
    const arm = () => {
      clearTimeout(hung);
      hung = setTimeout(() => {
        timedOut = true;
        call.cancel();
      }, speed.deadlineMs(expectBytes));
    };
    try {
      arm();
      for await (const d of call as AsyncIterable<ChunkDataWire>) {
        const key = keys[next++];
        if (key === undefined) break;
        const at = this.now();
        speed.observe({ bytes: d.payload?.byteLength ?? 0, ms: at - since });
        since = at;
        const payload = this.verify(d, key, layerStart, layerEnd, expectBytes);
        if (payload) {
          this.counters.bytes += payload.byteLength;
          this.countLink(address, payload.byteLength);
          this.counters.chunks++;
        } else this.counters.misses++;
        // The consumer's time with a chunk is not the peer's: the next deadline starts when it asks again.
        clearTimeout(hung);
        yield payload ? { key, payload } : { key, ...(d.missing && d.key === key ? { stale: true } : {}) };
        since = this.now();
        arm();
      }
    } catch {
      // Unreachable, reset, deadline, refused, too large: what did not arrive is a miss.
    } finally {
      clearTimeout(hung);
      call.cancel();
      channel.active--;
      channel.lastUsedMs = this.now();
    }
    if (timedOut) this.counters.deadlines++;
    for (; next < keys.length; next++) {
      this.counters.misses++;
      yield { key: keys[next]! };
    }
  }

  close(): void {
    clearInterval(this.sweep);
    for (const c of this.channels.values()) c.client.close();
    this.channels.clear();
  }

  /** Closes channels nobody used for `idleMs` (none with a call in flight). */
  evictIdle(): void {
    const now = this.now();
    for (const [k, c] of this.channels) {
      if (c.active === 0 && now - c.lastUsedMs >= this.idleMs) this.evict(k, c);
    }
  }

  private evict(key: string, c: Channel): void {
    c.client.close();
    this.channels.delete(key);
    this.counters.evicted++;
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

  private countLink(address: string, bytes: number): void {
    const peer = this.bytesByPeer.has(address) || this.bytesByPeer.size < 4 * this.maxChannels ? address : 'other';
    this.bytesByPeer.set(peer, (this.bytesByPeer.get(peer) ?? 0) + bytes);
  }

  private speed(address: string): LinkSpeed {
    let s = this.speeds.get(address);
    if (!s) {
      // Bounded like the channels: a node talks to a few peers, and a forgotten one just starts from the prior again.
      if (this.speeds.size >= 4 * this.maxChannels) this.speeds.clear();
      this.speeds.set(
        address,
        (s = new LinkSpeed(this.options.deadlineBaseMs === undefined ? {} : { baseMs: this.options.deadlineBaseMs })),
      );
    }
    return s;
  }

  /** The channel to `address` whose receive limit is `maxMessageBytes` (a node asks for a few sizes: a layer, a chunk, an E cache). */
  private channel(address: string, maxMessageBytes: number): Channel {
    const key = `${address}|${maxMessageBytes}`;
    let c = this.channels.get(key);
    if (!c) {
      if (this.channels.size >= this.maxChannels) {
        this.evictIdle();
        const lru = [...this.channels].filter(([, x]) => x.active === 0).sort((a, b) => a[1].lastUsedMs - b[1].lastUsedMs)[0];
        if (lru) this.evict(lru[0], lru[1]);
      }
      const { clients } = loadGrpcServices();
      const client = new clients.ChunkTransfer(address, peerChannelCredentials(this.options.tls), {
        'grpc.max_receive_message_length': maxMessageBytes,
        // Channels to the same peer with different limits must not share one subchannel's settings.
        'grpc.use_local_subchannel_pool': 1,
      }) as unknown as ChunkTransferClient;
      c = { client, lastUsedMs: this.now(), active: 0 };
      this.channels.set(key, c);
    }
    c.lastUsedMs = this.now();
    return c;
  }
}
