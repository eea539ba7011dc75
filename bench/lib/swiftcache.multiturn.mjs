// The master's multi-turn sessions of bench/swiftcache.bench.mjs (part 2): the real engine path,
// with or without lending.
import { ReferenceEngine } from '@mnemo/engine';
import { CHUNK_TOKENS, ElasticCacheCoordinator, layerPieces } from '@mnemo/kv-core';
import { percentile, round } from '@mnemo/testkit';
import { toks } from './swiftcache.runners.mjs';

/**
 * `o`: backend, weights (by model id), master, workers, deviceBytes (the node budget),
 * workerTokens (what each worker is observed to need), sessions, turns, firstTokens, userTokens,
 * replyTokens.
 *
 * Interleaved multi-turn sessions of the master through ReferenceEngine.prefill/decode, its
 * complete chunks written through to a host tier after every turn and restored layer by layer
 * when the device prefix cache lost them. TTFT = the prefill (first token) of turns ≥ 2.
 */
export async function masterMultiTurn(o, lend) {
  const engine = await ReferenceEngine.create({
    models: [o.master, ...o.workers],
    backend: o.backend,
    kvBlocks: { deviceBytes: o.deviceBytes },
  });
  if (lend) {
    const c = new ElasticCacheCoordinator(engine.elasticMembers(), 60_000, 'cache');
    for (const w of o.workers) c.observe(w, 0, o.workerTokens);
    c.observe(o.master, 0, 1 << 20);
    c.tick(1);
    c.checkInvariant();
  }
  const cfg = o.weights[o.master].config;
  const g = { layers: cfg.layers, rowElems: cfg.kvHeads * cfg.headDim };
  const host = Array.from({ length: o.sessions }, () => []);
  const history = Array.from({ length: o.sessions }, (_, s) => toks(o.firstTokens, 50 + s));
  const rows = [];
  const GREEDY = { temperature: 0, topP: 1, seed: 0 };
  for (let turn = 0; turn < o.turns; turn++) {
    for (let s = 0; s < o.sessions; s++) {
      const tokens = turn === 0 ? history[s] : [...history[s], ...toks(o.userTokens, 200 + turn * 10 + s)];
      const chunks = host[s];
      const restore = (hit) => {
        const until = Math.min(chunks.length * CHUNK_TOKENS, tokens.length - 1);
        if (until <= hit) return undefined;
        return {
          until,
          async load(layer) {
            const out = new Float32Array(2 * (until - hit) * g.rowElems);
            for (const p of layerPieces(g, layer, hit, until)) out.set(chunks[p.chunk].subarray(p.src, p.src + p.len), p.dst);
            return out;
          },
        };
      };
      const seqId = `mt-${s}-${turn}`;
      const t0 = performance.now();
      const [first] = await engine.prefill([{ seqId, model: o.master, tokens, sampling: GREEDY, cacheSalt: `s${s}`, restore }]);
      const ttft = performance.now() - t0;
      const reply = [first.token];
      for (let i = 1; i < o.replyTokens; i++) reply.push((await engine.decode([seqId]))[0].token);
      if (turn > 0)
        rows.push({
          session: s,
          turn,
          prompt: tokens.length,
          cached: first.cachedTokens,
          restored: first.restoredTokens,
          ttft_ms: round(ttft),
        });
      // Write-through of complete chunks: the host tier holds every turn's history.
      const kvLen = tokens.length + o.replyTokens - 1;
      for (let c = chunks.length; (c + 1) * CHUNK_TOKENS <= kvLen; c++) chunks.push(engine.exportChunk(seqId, c));
      history[s] = [...tokens, ...reply];
      engine.release(seqId);
    }
  }
  const capacity = engine.kvBudget(o.master).capacity;
  await engine.close();
  return { rows, capacity };
}

/** TTFT percentiles and where the cached tokens came from, over a run's follow-up turns. */
export const multiTurnStats = (r) => {
  const t = r.rows.map((x) => x.ttft_ms);
  return {
    master_blocks: r.capacity,
    ttft_p50_ms: round(percentile(t, 50)),
    ttft_p99_ms: round(percentile(t, 99)),
    device_hit_tokens: r.rows.reduce((a, x) => a + x.cached - x.restored, 0),
    restored_tokens: r.rows.reduce((a, x) => a + x.restored, 0),
    turns: r.rows,
  };
};
