// Test fixture (imported by specs only): a KvStore, or bare offload tiers, on real pool devices in
// a scratch folder. The kv-store specs differ in sizes and in what they do to the store, not in
// how it is opened and torn down, so that part is spelled once here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HoldingChange, KvRowGeometry } from '@mnemo/kv-core';
import { ReferenceEngine, type ReferenceEngineOptions } from '@mnemo/engine';
import type { KvStoreSettings } from '../src/config/kv-store.settings.js';
import { KvStore } from '../src/kv-store/kv.store.js';
import { OffloadTiers, type JournalReplay, type TierChange } from '../src/kv-store/offload.tiers.js';
import { closePoolDevices, openPoolDevices } from '../src/kv-store/pool.devices.js';
import { TierWriter, type TierWriterTuning } from '../src/kv-store/tier.writer.js';
import { smallPoolSettings } from './pool-settings.fixture.js';

const MiB = 1024 * 1024;

/** A fresh folder under the OS temp folder; the caller removes it (`removeDir`). */
export const scratchDir = (prefix: string): Promise<string> => mkdtemp(join(tmpdir(), prefix));
export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/**
 * A fresh scratch folder for each test of the calling describe (or file), removed after it: the
 * getter names the current one. The removal is an afterEach of the caller's block, so it runs
 * after the afterEach hooks of nested blocks but before those the block declares after this call.
 */
export function scratchDirEach(prefix: string): () => string {
  let dir = '';
  beforeEach(async () => {
    dir = await scratchDir(prefix);
  });
  afterEach(() => removeDir(dir));
  return () => dir;
}

export interface StoreOptions {
  /** Host pool bytes; the SSD pool is one 16 MiB file. */
  readonly hostBytes: number;
  readonly onChange?: (c: HoldingChange) => void;
  /** Tier-only models (DroidSpeak E caches). */
  readonly extra?: Parameters<typeof KvStore.open>[4];
  /** Settings over the defaults (a fault switch, say). */
  readonly settings?: Partial<KvStoreSettings>;
}

/**
 * A KvStore in `dir` over `engine`: host memory of `hostBytes`, one 16 MiB SSD pool, bandwidths
 * fixed at 10 and 2 GB/s so no probe runs.
 */
export async function openStore(engine: ReferenceEngine, dir: string, opts: StoreOptions): Promise<KvStore> {
  const settings = {
    ...smallPoolSettings(dir, { hostBytes: opts.hostBytes, ssdBytes: 16 * MiB }),
    bandwidths: [10e9, 2e9],
    ...opts.settings,
  };
  const store = await KvStore.open(settings, engine, opts.onChange ?? (() => undefined), () => undefined, opts.extra);
  if (!store) throw new Error('KvStore.open opened no store: is the engine serving a model with a KV layout?');
  return store;
}

export interface StoreRig {
  readonly dir: string;
  readonly engine: ReferenceEngine;
  readonly store: KvStore;
  /** Closes the store, then the engine, and removes the folder. */
  close(): Promise<void>;
}

/** A reference engine on the CPU and a store over it, in a scratch folder named after `prefix`. */
export async function openStoreRig(
  prefix: string,
  engineOpts: Omit<ReferenceEngineOptions, 'backend'>,
  opts: StoreOptions,
): Promise<StoreRig> {
  const dir = await scratchDir(prefix);
  const engine = await ReferenceEngine.create({ backend: 'cpu', ...engineOpts });
  const store = await openStore(engine, dir, opts);
  return {
    dir,
    engine,
    store,
    close: async () => {
      await store.close();
      await engine.close();
      await removeDir(dir);
    },
  };
}

export interface TiersRig {
  readonly tiers: OffloadTiers;
  /** What opening the model's journal found. */
  readonly replay: JournalReplay;
  /** Closes the tiers, then their devices. */
  close(): Promise<void>;
}

/** Offload tiers on the devices of `settings`, with `model` of geometry `g` journaled at `dir`/journal.mkvj. */
export async function openTiers(
  settings: KvStoreSettings,
  model: string,
  g: KvRowGeometry,
  onChange: (c: TierChange) => void = () => undefined,
): Promise<TiersRig> {
  const { devices } = await openPoolDevices(settings);
  const tiers = new OffloadTiers(devices, settings.ssdTtlMs, onChange);
  const replay = await tiers.addModel(model, g, join(settings.dataDir, 'journal.mkvj'));
  return {
    tiers,
    replay,
    close: async () => {
      await tiers.close();
      await closePoolDevices(devices);
    },
  };
}

/** A writer that rethrows any write error, so a spec fails on it. */
export const strictWriter = (tiers: OffloadTiers, tuning?: TierWriterTuning): TierWriter =>
  new TierWriter(
    tiers,
    (e) => {
      throw e;
    },
    undefined,
    tuning,
  );
