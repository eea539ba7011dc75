// DroidSpeak E caches in the KV tiers: what a derived model's prefill costs on a node that did not
// capture the base's E cache itself — after a restart (base KV and E cache read back from the SSD
// pool through the journal) and on a peer (base KV and E cache pulled over ChunkTransfer gRPC from
// the node that holds them) — with the profiled plan run unwidened over the stored E cache, side by
// side with what ran before E caches were stored (the plan widened to (0, 0, r2), base KV from the
// same place) and with the baseline, the derived model's own full prefill of the same prompt. Same
// engine, same process, interleaved, median of repeats. Real KvStore (host + SSD pools), real
// ChunkPeerClient and ChunkTransfer server on loopback; reference engine on the CPU.
// Pairs: the trained pairs (prompts: windows of held-out in-domain text from the fine-tune's
// .test.txt split, 2,048 tokens reused + 128) whose profiled plan has a transition layer, and,
// under `planted.*`, the constructed pairs (random-byte prompts; a test of the path, not a finding).
// Keys: per pair and scenario (restart, peer) the medians and speedups; top level: the weakest
// trained pair's (null when no trained plan needs an E cache). Writes bench/results/droidspeak-e-cache.json.
// Run: npm run bench -- droidspeak-e-cache [--quick]   (after npx tsc -b and npm run bench -- droidspeak)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReferenceEngine, syntheticPrompts } from '@mnemo/engine';
import { slidingWindows, splitTokens } from './lib/droidspeak.pairs.mjs';
import {
  basePrefill,
  CHUNK,
  derivedPrefillMs,
  ECacheTier,
  fallbacks,
  freshPeer,
  nodePlan,
  openNode,
  peerClient,
  peerSource,
  serveChunks,
} from './lib/droidspeak.node.mjs';
import { planReuse, withoutTransition } from '@mnemo/kv-core';
import { loadProfiledPlans } from './lib/profiled-plans.mjs';
import { median, round } from '@mnemo/testkit';
import { quick, root } from './lib/bench.args.mjs';

const RUN = quick ? { prompts: 2, tokens: 300, reps: 1 } : { prompts: 4, tokens: 576, reps: 5 };

const profiled = loadProfiledPlans(root);

/** Node Y's pools, and each fresh peer X's: the same on both sides of a pull. */
const NODE_POOLS = { hostMiB: 128, ssdMiB: 512 };
/** Node Y's tiers in `dir` (the same directory again: Y after a restart). */
const openStore = async (engine, dir, base) => (await openNode(engine, base, { ...NODE_POOLS, dir })).store;

// A peer chunk past its deadline is what the node does then: recompute, both attempts timed.
const prefillMs = derivedPrefillMs;

/** Trained pairs: windows over the test split, as droidspeak.json measured quality on; planted: random bytes. */
function promptsOf(p) {
  if (!p.test?.split) return { models: [p.base, p.derived], prompts: syntheticPrompts(RUN.prompts, RUN.tokens, 131) };
  const dir = (m) => join(root, 'tools/train/models', m);
  const w = slidingWindows(splitTokens(dir(p.derived), join(root, p.test.split)), {
    count: p.test.windows,
    context: p.test.context,
    tail: p.test.tail,
  });
  const step = Math.max(1, Math.floor(p.test.windows / RUN.prompts));
  return {
    models: [dir(p.base), dir(p.derived)],
    prompts: Array.from({ length: RUN.prompts }, (_, i) => [...w.prompts[i * step], ...w.continuations[i * step]]),
  };
}

async function runPair(p) {
  if (!p.chosen_pattern) return null;
  const { models, prompts } = promptsOf(p);
  const tokens = prompts[0].length;
  const until = Math.min(Math.floor(tokens / CHUNK) * CHUNK, tokens - 1);
  const engine = await ReferenceEngine.create({ models, backend: 'cpu', kvBlocks: 4 * Math.ceil(tokens / 16) + 8 });
  const dirY = mkdtempSync(join(tmpdir(), 'mnemo-droid-y-'));
  const { peers, logger } = peerClient();
  try {
    const L = engine.modelConfig(p.derived).layers;
    const chosen = p.chosen_pattern;
    const eLayer = planReuse(chosen, L).eLayer;
    if (eLayer === null) return null;
    const widened = withoutTransition(chosen, L);
    const d = engine.hiddenSize(p.base);
    const dOf = (b) => (b === p.base ? d : undefined);
    // Node Y: the base prefills each prompt (its KV written through, its E cache captured and kept), then Y restarts.
    let y = await openStore(engine, dirY, p.base);
    let yE = new ECacheTier(y, peers, dOf);
    for (const t of prompts) await basePrefill(engine, p.base, yE, t, [eLayer]);
    await y.settle();
    await y.close();
    y = await openStore(engine, dirY, p.base);
    yE = new ECacheTier(y, peers, dOf);
    const server = await serveChunks(y, logger);

    /** A plan as the node builds it: base KV through `promptStore`, the E cache through `tier` (none: the widened plan). */
    const plan = (promptStore, tier, t, pattern, sources) =>
      nodePlan({ base: p.base, promptStore, tier, tokens: t, pattern, eLayer: tier ? eLayer : null, until, sources });
    const ms = { restart: { full: [], widened: [], with_e: [] }, peer: { full: [], widened: [], with_e: [] } };
    for (let r = 0; r < RUN.reps + 1; r++) {
      // A fresh peer X per round: what it pulled from Y (and keeps) must not turn the next round local.
      const x = await freshPeer(engine, p.base, peers, dOf, NODE_POOLS);
      const xWidened = await freshPeer(engine, p.base, peers, dOf, NODE_POOLS);
      try {
        for (const t of prompts) {
          const src = peerSource(p.base, t, until, eLayer, server.address);
          const full = await prefillMs(engine, p.derived, t);
          const restartWidened = await prefillMs(engine, p.derived, t, plan(y, undefined, t, widened));
          const restartE = await prefillMs(engine, p.derived, t, plan(y, yE, t, chosen));
          const peerWidened = await prefillMs(engine, p.derived, t, plan(xWidened.prompts, undefined, t, widened, src));
          const peerE = await prefillMs(engine, p.derived, t, plan(x.prompts, new ECacheTier(x.store, peers, dOf), t, chosen, src));
          // The first round warms kernels, pools and connections up and is not counted.
          if (r > 0) {
            ms.restart.full.push(full);
            ms.restart.widened.push(restartWidened);
            ms.restart.with_e.push(restartE);
            ms.peer.full.push(full);
            ms.peer.widened.push(peerWidened);
            ms.peer.with_e.push(peerE);
          }
        }
      } finally {
        await x.close();
        await xWidened.close();
      }
    }
    await server.stop();
    await y.close();
    const summary = (m) => {
      const med = { full_prefill: median(m.full), widened_no_e_cache: median(m.widened), plan_with_stored_e_cache: median(m.with_e) };
      return {
        prefill_ms: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, round(v)])),
        speedup_with_e_cache: round(med.full_prefill / med.plan_with_stored_e_cache),
        speedup_widened: round(med.full_prefill / med.widened_no_e_cache),
      };
    };
    return {
      base: p.base,
      derived: p.derived,
      layers: L,
      profiled_pattern: chosen,
      widened_pattern: widened,
      prompt_tokens: tokens,
      reused_tokens: until,
      quality_loss: p.quality_loss,
      restart: summary(ms.restart),
      peer: summary(ms.peer),
    };
  } finally {
    peers.close();
    await engine.close();
    rmSync(dirY, { recursive: true, force: true });
  }
}

async function runAll(pairs, label) {
  const rows = [];
  for (const p of pairs) {
    const r = await runPair(p);
    if (!r) {
      console.log(
        `${label}${p.base} → ${p.derived}: profiled plan ${p.chosen_pattern ? JSON.stringify(p.chosen_pattern) : 'none (full prefill)'} needs no E cache; skipped`,
      );
      continue;
    }
    for (const s of ['restart', 'peer']) {
      const x = r[s];
      console.log(
        `${label}${p.base} → ${p.derived} [${s}] own prefill ${x.prefill_ms.full_prefill} ms · plan ${JSON.stringify(r.profiled_pattern)} with stored E cache ${x.prefill_ms.plan_with_stored_e_cache} ms (${x.speedup_with_e_cache}×) · widened ${x.prefill_ms.widened_no_e_cache} ms (${x.speedup_widened}×)`,
      );
    }
    rows.push(r);
  }
  return rows;
}

const rows = await runAll(quick ? profiled.pairs.slice(0, 1) : profiled.pairs, '');
const planted = await runAll(quick ? profiled.planted.pairs.slice(0, 1) : profiled.planted.pairs, '[planted] ');
const keys = (rs) => ({
  restart_speedup_with_e_cache: rs.length ? Math.min(...rs.map((r) => r.restart.speedup_with_e_cache)) : null,
  restart_speedup_widened: rs.length ? Math.min(...rs.map((r) => r.restart.speedup_widened)) : null,
  peer_speedup_with_e_cache: rs.length ? Math.min(...rs.map((r) => r.peer.speedup_with_e_cache)) : null,
  peer_speedup_widened: rs.length ? Math.min(...rs.map((r) => r.peer.speedup_widened)) : null,
});
const result = {
  benchmark: 'droidspeak-e-cache',
  quick,
  engine: 'reference (CPU backend, fp32)',
  baseline:
    "the derived model's own full prefill of the same prompt; and the plan widened to (0, 0, r2) as it ran before E caches were stored",
  peer_misses_recomputed: fallbacks.peer_misses,
  pairs_with_e_cache_plans: rows.map((r) => `${r.base} → ${r.derived}`),
  ...keys(rows),
  ...(rows.length ? {} : { note: 'no trained pair was profiled to a plan with a transition layer: nothing here needs an E cache' }),
  pairs: rows,
  planted: {
    note: 'constructed pairs (attention bases of two layers rotated), random-byte prompts: a test of the E-cache path, not a finding',
    primary_pair: planted.length ? `${planted.at(-1).base} → ${planted.at(-1).derived}` : null,
    ...keys(planted.slice(-1)),
    pairs: planted,
  },
};
writeFileSync(join(root, 'bench/results/droidspeak-e-cache.json'), JSON.stringify(result, null, 2) + '\n');
console.log('wrote bench/results/droidspeak-e-cache.json');
