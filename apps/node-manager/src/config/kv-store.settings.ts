import { freemem } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { ConfigOf } from '@mnemo/service-kit';
import type { kvStoreSchema } from './kv-store.schema.js';

/** One SSD pool device as configured: a file (created when missing) or a raw block device. */
export interface SsdPoolSetting {
  readonly path: string;
  /** Size to create/grow the file to; undefined opens it as it is (a block device). */
  readonly bytes?: number;
}

/** The KV store's validated configuration (see `parseKvStoreSettings`). */
export interface KvStoreSettings {
  readonly enabled: boolean;
  readonly dataDir: string;
  /** Host-memory pool: total bytes (0 = no host tier) split over `hostDevices` regions. */
  readonly hostBytes: number;
  readonly hostDevices: number;
  readonly ssdPools: readonly SsdPoolSetting[];
  /** Bytes/s per pool device, host devices first then SSDs; undefined = measure at start. */
  readonly bandwidths?: readonly number[];
  readonly ssdTtlMs: number;
  readonly ioBackend: 'auto' | 'pread';
  /** How often KV events are batched and published. */
  readonly eventsMs: number;
  /** Bound of the SSD write-behind queue, bytes (TierWriter; its default when absent). */
  readonly ssdQueueBytes?: number;
  /**
   * FAULT INJECTION ONLY, never for production (no environment variable sets it): restores skip
   * their CRC32C check, so corrupted KV is used. Default false; a control test turns it on to show
   * that corruption changes the output and that the check is what keeps it out.
   */
  readonly faultSkipRestoreCrc?: boolean;
}

/** The NODE_KV_* variables as loadConfig reads them, and the node's id (the default pool files carry it). */
export type KvStoreEnv = Partial<ConfigOf<typeof kvStoreSchema>> & { readonly NODE_ID: string };

/** Default host pool: a quarter of the memory free at start, at most 1 GiB. */
export const DEFAULT_HOST_POOL_CAP = 1024 ** 3;
/** Default SSD pool: one preallocated file of 1 GiB under the data directory. */
export const DEFAULT_SSD_POOL_BYTES = 1024 ** 3;
const MIN_POOL_BYTES = 1024 * 1024;

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  kib: 1024,
  m: 1e6,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1e9,
  gb: 1e9,
  gib: 1024 ** 3,
  t: 1e12,
  tb: 1e12,
  tib: 1024 ** 4,
};

/** "512MiB", "2G", "1048576" → bytes; undefined when it is not a size. */
export function parseByteSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return undefined;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const n = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Checks every KV-store variable and returns the settings, or the list of problems (the
 * node-manager reports them together with its other configuration problems at boot).
 */
export function parseKvStoreSettings(env: KvStoreEnv, cwd = process.cwd()): { settings?: KvStoreSettings; problems: string[] } {
  const problems: string[] = [];
  const dataDir = resolve(cwd, env.NODE_DATA_DIR?.trim() || join('.mnemo', 'nodes', env.NODE_ID));
  const enabled = (env.NODE_KV_STORE ?? 'on') === 'on';

  let hostBytes = Math.min(DEFAULT_HOST_POOL_CAP, Math.floor(freemem() / 4));
  const host = env.NODE_KV_HOST_POOL?.trim();
  if (host && host !== 'auto') {
    const n = parseByteSize(host);
    if (n === undefined)
      problems.push(`NODE_KV_HOST_POOL=${JSON.stringify(host)}: a size like 512MiB or 2GiB, 0 for no host tier, or auto`);
    else if (n !== 0 && n < MIN_POOL_BYTES)
      problems.push(`NODE_KV_HOST_POOL=${JSON.stringify(host)}: at least 1MiB (or 0 for no host tier)`);
    else hostBytes = n;
  }
  const hostDevices = env.NODE_KV_HOST_DEVICES ?? 1;

  const ssdPools: SsdPoolSetting[] = [];
  const ssdSpec = env.NODE_KV_SSD_POOLS ?? [];
  if (ssdSpec.length === 1 && ssdSpec[0] === 'none') {
    // No SSD tier: the host pool is the last tier.
  } else if (ssdSpec.length === 0) {
    ssdPools.push({ path: join(dataDir, 'ssd-0.pool'), bytes: DEFAULT_SSD_POOL_BYTES });
  } else {
    for (const entry of ssdSpec) {
      const [path, size] = entry.split('=');
      const bytes = size === undefined ? undefined : parseByteSize(size);
      if (!path || (size !== undefined && (bytes === undefined || bytes < MIN_POOL_BYTES))) {
        problems.push(
          `NODE_KV_SSD_POOLS entry ${JSON.stringify(entry)}: path[=size] (size ≥ 1MiB, e.g. /data/kv.pool=64GiB or /dev/nvme1n1), or none`,
        );
        continue;
      }
      ssdPools.push({ path: isAbsolute(path) ? path : resolve(cwd, path), bytes });
    }
  }

  let bandwidths: number[] | undefined;
  if (env.NODE_KV_BANDWIDTHS && env.NODE_KV_BANDWIDTHS.length > 0) {
    const devices = (hostBytes > 0 ? hostDevices : 0) + ssdPools.length;
    bandwidths = env.NODE_KV_BANDWIDTHS.map((b) => Number(b) * 1e9);
    if (bandwidths.some((b) => !Number.isFinite(b) || b <= 0))
      problems.push(`NODE_KV_BANDWIDTHS: positive GB/s figures, one per pool device`);
    else if (bandwidths.length !== devices)
      problems.push(`NODE_KV_BANDWIDTHS has ${bandwidths.length} figures for ${devices} pool devices (host devices first, then SSD pools)`);
  }
  if (problems.length > 0) return { problems };
  return {
    problems,
    settings: {
      enabled,
      dataDir,
      hostBytes,
      hostDevices,
      ssdPools,
      bandwidths,
      ssdTtlMs: env.NODE_KV_SSD_TTL_MS ?? 24 * 3600 * 1000,
      ioBackend: env.NODE_KV_IO_BACKEND === 'pread' ? 'pread' : 'auto',
      eventsMs: env.NODE_KV_EVENTS_MS ?? 100,
      ssdQueueBytes: (env.NODE_KV_SSD_QUEUE_MB ?? 256) * 1024 * 1024,
    },
  };
}
