import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExtentAllocator, hostPoolLayout, POOL_ALIGNMENT, type LedgerDevice, type PoolTier } from '@mnemo/kv-core';
import {
  ioInfo,
  numaNodes,
  openHostPool,
  openSsdPool,
  probeDirectIo,
  probeMemcpy,
  type HostPoolDevice,
  type SsdPoolDevice,
} from '@mnemo/native-cuda';
import type { KvStoreSettings } from '../config/kv-store.settings.js';

/** One device of the unified pool with the free-space allocator that places segments on it. */
export interface PoolDevice extends LedgerDevice {
  readonly device: HostPoolDevice | SsdPoolDevice;
  readonly name: string;
}

/** What opening the pool found, for the start-up log line. */
export interface PoolReport {
  readonly devices: ReadonlyArray<{ name: string; type: PoolTier; bytes: number; bandwidthGBs: number; detail: string }>;
  readonly io: string;
  /** The SSD pools' I/O backend ('io_uring', 'pread'; several joined by '+'), '' without SSD pools: the heartbeat's and /metrics' label. */
  readonly ssdBackend: string;
}

/** Nest token of the node's SSD backend (PoolReport.ssdBackend; '' when the node keeps no SSD pool). */
export const SSD_BACKEND = Symbol('SSD_BACKEND');

/** The backends the SSD pools actually run (a pool may fall back even where io_uring is compiled in). */
export function ssdBackendOf(devices: readonly PoolDevice[]): string {
  return [...new Set(devices.flatMap((d) => ('backend' in d.device ? [d.device.backend] : [])))].sort().join('+');
}

const PROBE_BYTES = 64 * 1024 * 1024;

/**
 * Requests (up to 1 MiB each) an SSD pool keeps in flight. NOTE: 16 made a restore's layers land
 * in order (requests finish about in queue order) but made SSD puts 28% slower (same-process A/B,
 * 11 rounds) for no measurable gain on gets once reads ran in a ring (`npm run bench -- tiers-ab`:
 * 1.00), so pools keep 64.
 */
export const SSD_QUEUE_DEPTH = 64;

/** For measurements only: another SSD queue depth than SSD_QUEUE_DEPTH. */
export interface PoolDeviceOptions {
  readonly ssdQueueDepth?: number;
}

/**
 * Opens the host-memory and SSD pool devices the settings name (creating SSD pool files,
 * reopening existing ones as they are, so a restarted node finds its data) and measures each
 * device's bandwidth unless configured: memcpy for host memory, O_DIRECT reads of a scratch
 * file beside each SSD pool (never the pool itself, which may hold a previous run's KV).
 */
export async function openPoolDevices(
  s: KvStoreSettings,
  options: PoolDeviceOptions = {},
): Promise<{ devices: PoolDevice[]; report: PoolReport }> {
  const devices: PoolDevice[] = [];
  try {
    const host = hostPoolLayout(s.hostBytes, s.hostDevices, numaNodes());
    const probe = async () => (await probeMemcpy(Math.min(PROBE_BYTES, host[0]!.bytes), 3)).medianBytesPerSecond;
    const memBw = s.bandwidths ? undefined : host.length > 0 ? await probe() : 0;
    for (const [i, { index, bytes, numaNode }] of host.entries()) {
      const device = await openHostPool({ bytes, numaNode });
      devices.push({
        index,
        type: 'mem',
        device,
        bandwidth: s.bandwidths?.[i] ?? memBw!,
        allocator: new ExtentAllocator(device.bytes, POOL_ALIGNMENT),
        name: `host${i}`,
      });
    }
    for (const [i, pool] of s.ssdPools.entries()) {
      await mkdir(dirname(pool.path), { recursive: true });
      const device = await openSsdPool({
        path: pool.path,
        bytes: pool.bytes,
        blockSize: POOL_ALIGNMENT,
        backend: s.ioBackend,
        queueDepth: options.ssdQueueDepth ?? SSD_QUEUE_DEPTH,
      });
      const bandwidth = s.bandwidths?.[host.length + i] ?? (await measureSsd(pool.path, s.ioBackend));
      devices.push({
        index: i,
        type: 'ssd',
        device,
        bandwidth,
        allocator: new ExtentAllocator(device.bytes, POOL_ALIGNMENT),
        name: `ssd${i}`,
      });
    }
  } catch (e) {
    await closePoolDevices(devices);
    throw e;
  }
  const io = ioInfo();
  const ssdBackend = ssdBackendOf(devices);
  const uringNote = io.uringAvailable ? '' : ` (io_uring unavailable: ${io.uringReason ?? 'not compiled in'})`;
  const fallbackReason = devices.flatMap((d) => ('backendReason' in d.device && d.device.backendReason ? [d.device.backendReason] : []))[0];
  return {
    devices,
    report: {
      ssdBackend,
      io: !ssdBackend.includes('pread')
        ? `${ssdBackend || 'no SSD pool'}${uringNote} (crc32c: ${io.crc32c})`
        : `pread/pwrite fallback: ${fallbackReason ?? io.uringReason ?? 'io_uring not compiled in'} (crc32c: ${io.crc32c})`,
      devices: devices.map((d) => ({
        name: d.name,
        type: d.type,
        bytes: d.device.bytes,
        bandwidthGBs: Math.round(d.bandwidth / 1e7) / 100,
        detail:
          'path' in d.device
            ? `${d.device.path} ${d.device.backend}${d.device.backendReason ? ` (${d.device.backendReason})` : ''}`
            : `${d.device.kind}${d.device.numaNode === null ? '' : ` numa ${d.device.numaNode}`}`,
      })),
    },
  };
}

export async function closePoolDevices(devices: readonly PoolDevice[]): Promise<void> {
  await Promise.allSettled(devices.map((d) => d.device.close()));
}

/** Sequential O_DIRECT read throughput of the filesystem or device beside the pool. */
async function measureSsd(poolPath: string, backend: 'auto' | 'pread'): Promise<number> {
  const scratch = join(dirname(poolPath), `.bandwidth-probe-${process.pid}`);
  try {
    await probeDirectIo({ path: scratch, bytes: PROBE_BYTES / 4, mode: 'write', backend });
    return (await probeDirectIo({ path: scratch, bytes: PROBE_BYTES / 4, mode: 'read', backend })).bytesPerSecond;
  } finally {
    await rm(scratch, { force: true });
  }
}
