import { CHUNK_TOKENS, ErrorCode, isMnemoError, MnemoError } from '@mnemo/kv-core';
import type { KvRestorePlan } from '../engine.interface.js';
import { fillLayer, layerMatches, type SimKvLayout } from './sim-kv.content.js';

/** A sequence whose prompt positions [from, plan.until) come back through a restore plan. */
export interface SimRestore {
  readonly seqId: string;
  readonly plan: KvRestorePlan;
  readonly from: number;
  readonly layout: SimKvLayout;
  /** Position hashes of the prompt up to at least plan.until: what the restored bytes must encode. */
  readonly hashes: Uint32Array;
}

/** The pass's clock port: the modelled compute is waited on it, blocked time is read from it. */
export interface PassClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * Waits shorter than this are folded into the next one. NOTE: a timer costs about 1 ms whatever
 * it is asked for, so sleeping every layer of a 32-layer pass would add ~30 ms of fake compute;
 * the price is that a load may start up to this much earlier than the modelled device would start it.
 */
const MIN_SLEEP_MS = 2;

/**
 * One modelled prefill pass of `computeMs` (the cost of the tokens actually computed), spread
 * evenly over `layers` layers, while the restoring sequences' KV arrives layer by layer as in the
 * reference engine: load(l) starts when layer l-1 starts computing and is awaited before layer l,
 * so only a load that outlasts the compute it overlaps is blocked time. With a priced link
 * (`restorePerChunkMs` > 0) every layer also crosses one modelled host → device link, one layer
 * after another: layer l arrives no sooner than the link has carried it, after layer l-1, at
 * `restorePerChunkMs / layers` per restored chunk of each sequence. Each arrived layer is
 * checked bit for bit against what the sequence's tokens give. A mismatch, or a load rejected
 * with DataLoss (a peer past its deadline, a corrupt copy), drops that sequence only: `dropped`
 * hears it once, its later layers are neither awaited nor checked, and the pass goes on for the
 * others. Any other rejection fails the pass. Returns blocked ms.
 */
export async function runRestoringPass(
  restores: readonly SimRestore[],
  computeMs: number,
  clock: PassClock,
  isHeld: (seqId: string) => boolean,
  restorePerChunkMs = 0,
  dropped: (seqId: string, e: MnemoError) => void = (_id, e) => {
    throw e;
  },
): Promise<number> {
  const layers = Math.max(...restores.map((r) => r.layout.layers));
  const perLayerMs = computeMs / layers;
  const scratch = new Map<string, Float32Array>();
  let linkFree = clock.now();
  const failed = new Set<string>();
  const drop = (r: SimRestore, e: unknown) => {
    if (!isMnemoError(e) || e.code !== ErrorCode.DataLoss) throw e;
    if (failed.has(r.seqId)) return;
    failed.add(r.seqId);
    dropped(r.seqId, e);
  };
  const startLoads = (layer: number): { loads: Promise<Array<[SimRestore, Float32Array | Error]>>; arriveBy: number } => {
    const mine = restores.filter((r) => layer < r.layout.layers && !failed.has(r.seqId));
    // A rejected load is kept as its error: one sequence's failure must not cut the others' wait short.
    const loads = Promise.all(
      mine.map(
        async (r) =>
          [r, await r.plan.load(layer).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))] as [
            SimRestore,
            Float32Array | Error,
          ],
      ),
    );
    const linkMs = mine.reduce((ms, r) => ms + (((r.plan.until - r.from) / CHUNK_TOKENS) * restorePerChunkMs) / r.layout.layers, 0);
    linkFree = Math.max(linkFree, clock.now()) + linkMs;
    return { loads, arriveBy: linkFree };
  };
  const check = (r: SimRestore, layer: number, got: Float32Array) => {
    if (!isHeld(r.seqId)) return; // cancelled meanwhile: nothing is kept, nothing to check
    const want = scratch.get(r.seqId) ?? new Float32Array(2 * (r.plan.until - r.from) * r.layout.rowElems);
    scratch.set(r.seqId, want);
    fillLayer(want, 0, r.hashes, r.from, r.plan.until, layer, r.layout.rowElems);
    if (!layerMatches(got, want)) {
      throw new MnemoError(
        ErrorCode.DataLoss,
        `restored KV of ${r.seqId} layer ${layer} (positions ${r.from}..${r.plan.until}) ` +
          `is not what its tokens give (the request recomputes)`,
      );
    }
  };
  let computeEnd = clock.now(); // modelled end of the last layer started
  let blocked = 0;
  let pending: ReturnType<typeof startLoads> | undefined = startLoads(0);
  for (let layer = 0; layer < layers; layer++) {
    const loaded = await pending!.loads;
    const arrived = Math.max(clock.now(), pending!.arriveBy);
    if (arrived > computeEnd) {
      blocked += arrived - computeEnd;
      computeEnd = arrived;
    }
    for (const [r, got] of loaded) {
      if (failed.has(r.seqId)) continue;
      try {
        if (got instanceof Error) throw got;
        check(r, layer, got);
      } catch (e) {
        drop(r, e);
      }
    }
    // Layer `layer` computes from computeEnd; the next load starts with it, not before.
    const ahead = computeEnd - clock.now();
    if (ahead >= MIN_SLEEP_MS) await clock.sleep(ahead);
    computeEnd += perLayerMs;
    pending = layer + 1 < layers ? startLoads(layer + 1) : undefined;
  }
  const rest = computeEnd - clock.now();
  if (rest > 0) await clock.sleep(rest);
  return blocked;
}
