// What the SwiftCache benchmark runs the master on, at engine level (the CPU reference engine,
// no serving path): the master resident in a region of its own, a lending node (workers on their
// regions lending idle units through the real coordinator), the master's layer stream cache over
// local and lent blocks, the longest context each completes, and the activation memory a chunk
// of prefill takes (measured, to charge it as vLLM's profile run does).
import { DeviceModel, DeviceRegionBacking, LayerStreamCache, ModelRuntime, argmax, emptyStats } from '@mnemo/engine';
import { DeviceBlockManager, ElasticCacheCoordinator, blockElements } from '@mnemo/kv-core';

export const toks = (n, salt = 0) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);

/** Runs a prompt of `n` tokens (in chunks of `chunk`) + `decode` greedy tokens through `step`; true when it completes. */
export async function completes(step, n, chunk, decode) {
  try {
    let logits;
    const p = toks(n, 1);
    for (let at = 0; at < n; at += chunk) logits = await step(p.slice(at, at + chunk));
    for (let i = 0; i < decode; i++) logits = await step([argmax(logits)]);
    return true;
  } catch (e) {
    if (e?.code === 'overloaded') return false;
    throw e;
  }
}

/** Largest whole-block context (prompt = blocks·16 − decode) that completes, walking from `guessBlocks`; `make` builds a fresh runner. */
export async function maxContext(make, chunk, guessBlocks, decode) {
  const len = (b) => b * 16 - decode;
  const ok = async (b) => {
    const r = make();
    try {
      return await completes(r.step, len(b), chunk, decode);
    } finally {
      r.free();
    }
  };
  let b = Math.max(1, guessBlocks);
  while (b > 1 && !(await ok(b))) b--;
  while (await ok(b + 1)) b++;
  return { tokens: len(b) + decode, blocks: b, refused_at_blocks: b + 1 };
}

/** The master with every layer resident in a region of `blocks` blocks. */
export function residentRunner(backend, weights, blocks) {
  const rt = new ModelRuntime(backend, weights, blocks, emptyStats());
  rt.cache.open('m');
  return { step: async (t) => (await rt.step([{ seqId: 'm', tokens: t }]))[0].logits, free: () => rt.free() };
}

/**
 * Workers on their regions having lent every idle unit to the master through the coordinator:
 * each keeps room for its own demand (`workerDemandTokens` each), the master asks for everything.
 * `specs[0]` is the master's; `regions` in each model's own blocks.
 */
export function lendingNode(backend, weights, specs, regions, workerDemandTokens, masterGeometry) {
  const [master, ...workerIds] = specs.map((s) => s.id);
  const masterOwn = new DeviceBlockManager(regions[master]);
  const workers = workerIds.map((id) => ({ id, rt: new ModelRuntime(backend, weights[id], regions[id], emptyStats()) }));
  const coord = new ElasticCacheCoordinator(
    [{ ...specs[0], blocks: masterOwn }, ...workers.map((w, i) => ({ ...specs[i + 1], blocks: w.rt.cache.ledger.blocks }))],
    60_000,
  );
  for (const w of workers) coord.observe(w.id, 0, workerDemandTokens);
  coord.observe(master, 0, 1 << 20);
  coord.tick(1);
  coord.checkInvariant();
  const lent = workers.map(
    (w) =>
      new DeviceRegionBacking(backend, w.rt.cache.tensor, masterGeometry, coord.borrowedBlocks(w.id), (b) =>
        coord.lentBlockOffset(w.id, b),
      ),
  );
  return {
    coord,
    workers,
    lent,
    lentBlocks: workers.reduce((a, w) => a + coord.borrowedBlocks(w.id).capacity, 0),
    free: () => workers.forEach((w) => w.rt.free()),
  };
}

/** The master's stream over `lentBackings` (+ `host`) plus a regular cache in its own memory, sized by a streamedContextPlan. */
export function streamRunner(backend, weights, shape, geometry, plan, window, lentBackings, host) {
  const BE = blockElements(shape);
  const regular = plan.regularBlocks > 0 ? backend.alloc(plan.regularBlocks * BE) : null;
  const backings = [];
  if (regular)
    backings.push(new DeviceRegionBacking(backend, regular, geometry, new DeviceBlockManager(plan.regularBlocks), (b) => b * BE, 'local'));
  backings.push(...lentBackings);
  if (host) backings.push(host);
  const lsc = new LayerStreamCache(backend, new DeviceModel(backend, weights), { blocks: plan.contextBlocks, window, backings });
  return { lsc, free: () => (lsc.free(), regular && backend.free(regular)) };
}

/**
 * The backend with a count of live elements: what `alloc` hands out and `free` has not taken
 * back. `peak()` since the last `mark()` is the most alive at once above the mark.
 */
export function countingBackend(backend) {
  const sizes = new Map();
  let live = 0;
  let base = 0;
  let peak = 0;
  const counted = new Proxy(backend, {
    get(target, prop) {
      if (prop === 'alloc')
        return (elements) => {
          const t = target.alloc(elements);
          sizes.set(t, elements);
          live += elements;
          peak = Math.max(peak, live);
          return t;
        };
      if (prop === 'free')
        return (t) => {
          live -= sizes.get(t) ?? 0;
          sizes.delete(t);
          return target.free(t);
        };
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return {
    backend: counted,
    mark: () => {
      base = live;
      peak = live;
    },
    peak: () => peak - base,
  };
}

/**
 * Activation elements a `chunk`-token prefill step of the resident master takes at its peak,
 * measured on the backend (as vLLM's profile run measures a forward of its batch): the first
 * chunk and a chunk after `context` tokens, the larger.
 */
export async function activationPeak(backend, weights, chunk, context) {
  const c = countingBackend(backend);
  const rt = new ModelRuntime(c.backend, weights, Math.ceil((context + chunk) / 16) + 1, emptyStats());
  try {
    rt.cache.open('a');
    const p = toks(context + chunk, 2);
    c.mark();
    await rt.step([{ seqId: 'a', tokens: p.slice(0, chunk) }]);
    const first = c.peak();
    for (let at = chunk; at < context; at += chunk) await rt.step([{ seqId: 'a', tokens: p.slice(at, Math.min(context, at + chunk)) }]);
    c.mark();
    await rt.step([{ seqId: 'a', tokens: p.slice(context, context + chunk) }]);
    return Math.max(first, c.peak());
  } finally {
    rt.free();
  }
}
