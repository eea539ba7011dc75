// The interference part of bench/swiftcache.bench.mjs: the master's streamed turns and the
// workers' decode steps, run side by side.
import { argmax } from '@mnemo/engine';
import { toks } from './swiftcache.runners.mjs';

/**
 * Rounds of worker requests until `more(round)` says stop: each worker prefills `load.seqs`
 * prompts of `load.prompt` tokens, then `load.decode` timed decode steps; returns the steps' times (TPOT).
 */
export async function workerDecode(workers, more, load) {
  const tpot = [];
  for (let round = 0; round === 0 || more(round); round++) {
    for (const w of workers) {
      w.last = [];
      for (let s = 0; s < load.seqs; s++) {
        w.rt.cache.open(`w${s}`);
        w.last.push(argmax((await w.rt.step([{ seqId: `w${s}`, tokens: toks(load.prompt, s + 3 + round) }]))[0].logits));
      }
    }
    for (let i = 0; i < load.decode; i++) {
      for (const w of workers) {
        const t0 = performance.now();
        const out = await w.rt.step(w.last.map((tok, s) => ({ seqId: `w${s}`, tokens: [tok] })));
        tpot.push(performance.now() - t0);
        w.last = out.map((o) => argmax(o.logits));
      }
      await new Promise((r) => setImmediate(r));
    }
    for (const w of workers) for (let s = 0; s < load.seqs; s++) w.rt.cache.release(`w${s}`);
  }
  return tpot;
}

/**
 * `n` follow-up turns of the master on the layer stream cache `lsc`: each a history (prefilled in
 * `o.chunk`-token chunks, untimed) then a timed turn of `o.turnTokens` tokens; returns the TTFTs.
 */
export async function masterTurns(lsc, n, o) {
  const ttft = [];
  const histories = Array.from({ length: n }, (_, i) =>
    Math.min(o.contextBlocks * 16 - o.turnTokens - 16, 128 + ((i * 97) % (o.contextBlocks * 16 - 128 - o.turnTokens - 16))),
  );
  for (let i = 0; i < n; i++) {
    const id = `t${i}`;
    lsc.open(id);
    const h = toks(histories[i], i);
    for (let at = 0; at < h.length; at += o.chunk) await lsc.step(id, h.slice(at, at + o.chunk));
    const t0 = performance.now();
    await lsc.step(id, toks(o.turnTokens, 100 + i));
    ttft.push(performance.now() - t0);
    lsc.release(id);
  }
  return { ttft, histories };
}
