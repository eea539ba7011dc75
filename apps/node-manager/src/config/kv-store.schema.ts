import type { Schema } from '@mnemo/service-kit';
import { isReference } from './engine.schema.js';

/** The KV store: the device cache, elastic units, the layer stream, the host and SSD pools, KV events. */
export const kvStoreSchema = {
  NODE_KV_BLOCKS: {
    type: 'int',
    doc: 'device KV blocks (16 tokens) per model; the sim engine models this capacity',
    default: 1024,
    min: 1,
  },
  NODE_KV_DEVICE_BYTES: {
    type: 'string',
    doc:
      'one device KV budget (512MiB, 2GiB, …) shared by all NODE_MODELS, split into ' +
      'elastic regions of whole minimum elastic units; replaces NODE_KV_BLOCKS when set',
  },
  NODE_KV_ELASTIC: {
    type: 'enum',
    doc:
      'with NODE_KV_DEVICE_BYTES and several models: on — idle models lend whole elastic units of their ' +
      'region to the one whose demand exceeds its own (SwiftCache); off — regions stay as split at start',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_KV_LAYER_STREAM: {
    type: 'enum',
    doc:
      "reference engine: on — a request whose context does not fit its model's " +
      'device KV cache (after elastic borrowing) is served through the layer stream ' +
      "cache (a window of layers resident, the rest streamed from the cache's free " +
      'blocks and host memory), one per model at a time; off — it is refused with 400',
    values: ['on', 'off'],
    default: 'on',
    when: isReference,
  },
  NODE_KV_STREAM_WINDOW: {
    type: 'int',
    doc: 'layer stream: resident layer planes (the active layer and those being loaded); at most the layers of every served model',
    default: 2,
    min: 2,
    max: 1024,
    when: isReference,
  },
  NODE_KV_STREAM_HOST_MB: {
    type: 'int',
    doc: 'layer stream: host memory per model for the KV of a streamed context the device cannot back (MiB; 0: device only)',
    default: 64,
    min: 0,
    max: 1 << 20,
    when: isReference,
  },
  NODE_KV_ELASTIC_WINDOW_MS: {
    type: 'int',
    doc: 'a model keeps room for the largest demand it saw this long ago (Algorithm 1 scale-down window)',
    default: 60_000,
    min: 1,
  },
  NODE_KV_ELASTIC_SESSION_WINDOW_MS: {
    type: 'int',
    doc:
      "a session served this long ago still counts as its model's elastic demand, with the KV it held (capped by " +
      'NODE_PREFIX_CACHE_BLOCKS; none with NODE_PREFIX_CACHE=off): its next turn will want it on the device; 0 — live requests alone',
    default: 60_000,
    min: 0,
  },
  NODE_KV_ELASTIC_TICK_MS: { type: 'int', doc: 'how often idle units are lent and refused reclaims retried', default: 1000, min: 10 },
  NODE_PREFIX_CACHE: {
    type: 'enum',
    doc:
      'device prefix cache: on (requests of one tenant share cached KV blocks), or ' +
      'off (every request recomputes its prompt; the offload tiers get nothing)',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_PREFIX_CACHE_BLOCKS: {
    type: 'int',
    doc:
      'most cached (reusable, unreferenced) KV blocks each model keeps on the device; ' +
      'older ones are evicted to the offload tiers as they are released (0: a ' +
      'finished request keeps nothing on the device — its next turn restores from the ' +
      'tiers, InferCept-style; default: unbounded, kept until the space is needed)',
    min: 0,
  },
  NODE_KV_WARM: {
    type: 'enum',
    doc:
      'KV store: on — a request starts reading the SSD part of its cached prefix into the host pool ' +
      'as it arrives, so the reads land while it waits for its pass; off — when its pass starts',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DATA_DIR: {
    type: 'string',
    doc: 'where the node keeps its SSD pool files and journals (default .mnemo/nodes/<NODE_ID> under the working directory)',
  },
  NODE_KV_STORE: {
    type: 'enum',
    doc: 'the tiered KV store (host pool + SSD pool behind the device cache): on or off',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_KV_HOST_POOL: {
    type: 'string',
    doc: 'host-memory pool size (512MiB, 2GiB, …), 0 for none, or auto: a quarter of free memory, at most 1GiB',
    default: 'auto',
  },
  NODE_KV_HOST_DEVICES: {
    type: 'int',
    doc: 'host pool devices (memory regions) the host pool is split into, e.g. one per NUMA node',
    default: 1,
    min: 1,
    max: 64,
  },
  NODE_KV_SSD_POOLS: {
    type: 'list',
    doc: 'SSD pool devices: path[=size] each (a preallocated file or a raw block device), or none (default: <data dir>/ssd-0.pool=1GiB)',
  },
  NODE_KV_BANDWIDTHS: { type: 'list', doc: 'GB/s of each pool device, host devices first then SSD pools (default: measured at start)' },
  NODE_KV_SSD_TTL_MS: { type: 'int', doc: 'chunks unused this long leave the SSD pool', default: 86_400_000, min: 1000 },
  NODE_KV_SSD_QUEUE_MB: {
    type: 'int',
    doc:
      'bound of the SSD write-behind queue (MiB of pinned host segments and payloads waiting for ' +
      'their SSD write); past it a chunk is kept in the faster tiers only, or recomputed later',
    default: 256,
    min: 1,
  },
  NODE_KV_IO_BACKEND: {
    type: 'enum',
    doc: 'SSD I/O: auto (io_uring when available, else pread) or pread',
    values: ['auto', 'pread'],
    default: 'auto',
  },
  NODE_KV_EVENTS_MS: {
    type: 'int',
    doc: 'KV events (what the node holds, per tier) are batched and published this often',
    default: 100,
    min: 10,
  },
} as const satisfies Schema;
