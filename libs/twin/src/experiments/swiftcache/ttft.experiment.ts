// SwiftCache's P99 TTFT (§5.1, Fig. 7) on the twin: multi-turn requests with histories over 20K
// tokens arrive as a Poisson process at one master GPU, served first come first served. A request's
// history is in the master's own cache, in a second tier — lent worker memory over NVLink
// (SwiftCache) or host memory over the shared PCIe 4.0 link (vLLM + LMCache CPU offload at its
// best: asynchronous, layer-wise) — or nowhere (recomputed). Loads overlap the prefill layer by
// layer (§3.3). SwiftCache's lent tier is what kv-core's coordinator lends, on the demand Mnemo's
// node-manager records (CoordinatedElasticCache: kv-core's SessionDemand — the live requests at
// full length plus the sessions served within the elastic window).
import { blockElements, blocksFor, percentile, SessionDemand, streamPlaneBlocks, type LiveDemand } from '@mnemo/kv-core';
import { SeededRng } from '../../core/seeded.rng.js';
import { kvBytesPerToken, MODELS } from '../../costs/hardware.tables.js';
import { layerwisePrefillMs } from '../../costs/layerwise.load.js';
import { kvBudgetBytes } from '../../costs/memory.budget.js';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import type { TransferLink } from '../../costs/transfer.port.js';
import { SessionKvTiers } from '../../node/session-kv.tiers.js';
import { elasticLoan } from './max-context.experiment.js';
import {
  kvShape,
  roundTo,
  SWIFTCACHE_SETUP,
  swiftcacheHardware,
  type SwiftcacheHardware,
  type SwiftcacheSetup,
  type TokenDraw,
} from './swiftcache.setup.js';

const round = (x: number | null, d = 3) => roundTo(x, d);
const clampInt = (x: number, { min, max }: TokenDraw) => Math.max(min, Math.min(max, Math.round(x)));

/** One request of the TTFT workload; `warm` is the fresh session that replaces its ended one, if any. */
export interface TtftRequest {
  readonly at: number;
  readonly session: number;
  readonly history: number;
  readonly input: number;
  readonly reply: number;
  readonly measured: boolean;
  warm: { readonly session: number; readonly history: number; readonly ended: number } | null;
}

export interface TtftWork {
  /** The sessions in rotation before the first arrival. */
  readonly initial: readonly { readonly session: number; readonly history: number }[];
  readonly requests: readonly TtftRequest[];
}

export type TtftSystem = 'offload' | 'swiftcache' | 'swiftcache-live-only' | 'swiftcache-lend-idle';

export interface TtftRun {
  readonly ttft_p99_ms: number;
  readonly ttft_p50_ms: number;
  readonly utilization: number;
  readonly history_in: Readonly<Record<string, number>>;
  readonly lent_gb?: number;
  readonly loaded_gb: number;
  readonly stored_gb: number;
  readonly span_s: number;
  readonly per_worker_bytes?: readonly number[];
}

export interface TtftRate {
  readonly rate_per_s: number;
  readonly offload: TtftRun;
  readonly swiftcache: TtftRun;
  readonly swiftcache_live_only: TtftRun;
  readonly swiftcache_lend_idle: TtftRun;
  readonly p99_ratio: number;
  readonly p99_ratio_live_only: number;
  readonly p99_ratio_lend_idle: number;
}

export interface TtftExperiment {
  readonly sessions_in_rotation: number;
  readonly rates: readonly TtftRate[];
}

/**
 * Sessions in rotation: as many of the longest histories as the offloading baseline's tiers hold
 * whole (its HBM cache, then the host), so at its best it recomputes none.
 */
export function sessionsInRotation(s: SwiftcacheSetup = SWIFTCACHE_SETUP, hw: SwiftcacheHardware = swiftcacheHardware(s)): number {
  const longest = (s.historyTokens[1] + s.turnInput.max + s.reply.max) * kvBytesPerToken(hw.master);
  const hbm = kvBudgetBytes(hw.gpu.memBytes, hw.master, s.chunkTokens, { utilization: s.utilization });
  return Math.max(1, Math.floor(hbm / longest) + Math.floor(s.hostOffloadBytes / longest));
}

/**
 * The requests at one rate, the same for both systems: Poisson arrivals, a session drawn uniformly
 * from those in rotation, its history, the turn's new tokens and reply. A session past the longest
 * history ends; a fresh one takes its place, its earlier rounds served as warm-up (`warm`).
 */
export function ttftWorkload(ratePerS: number, s: SwiftcacheSetup = SWIFTCACHE_SETUP, slots = sessionsInRotation(s)): TtftWork {
  const rng = new SeededRng(s.seed).fork(Math.round(ratePerS * 1000));
  const [lo, hi] = s.historyTokens;
  let next = 0;
  const fresh = () => ({ session: next++, history: lo + Math.floor(rng.next() * (hi - lo)) });
  const rotation = Array.from({ length: slots }, fresh);
  const initial = rotation.map((x) => ({ ...x }));
  const total = s.requests + Math.floor(s.requests / 4);
  const out: TtftRequest[] = [];
  let t = 0;
  for (let i = 0; i < total; i++) {
    t += (-Math.log(1 - rng.next()) / ratePerS) * 1000;
    const slot = Math.floor(rng.next() * slots);
    const cur = rotation[slot];
    const input = clampInt(rng.lognormal(s.turnInput.median, s.turnInput.sigma), s.turnInput);
    const reply = clampInt(rng.lognormal(s.reply.median, s.reply.sigma), s.reply);
    const req: TtftRequest = {
      at: t,
      session: cur.session,
      history: cur.history,
      input,
      reply,
      measured: i >= total - s.requests,
      warm: null,
    };
    cur.history += input + reply;
    if (cur.history > hi) {
      rotation[slot] = fresh();
      req.warm = { ...rotation[slot], ended: cur.session };
    }
    out.push(req);
  }
  return { initial, requests: out };
}

/** A system's tiers (the master's own cache first), the link in front of each, and SwiftCache's loan hooks. */
interface SystemTiers {
  readonly tiers: SessionKvTiers;
  readonly links: readonly (TransferLink | null)[];
  /** Records the live requests at an admission and lets the coordinator resize the lent tier. */
  readonly admit: ((nowMs: number, live: readonly LiveDemand[]) => void) | null;
  /** Bytes each worker lends now. */
  readonly lenders: (() => number[]) | null;
  readonly sessions: SessionDemand | null;
}

/**
 * The two systems' tiers: the master's own cache first, then the second tier and its link.
 * 'swiftcache' lends on the demand Mnemo's node-manager records at each admission: kv-core's
 * SessionDemand over the elastic window — live requests at full length plus the KV of the sessions
 * served within the window and not live now (no cap: the node-manager's prefix cache is unbounded by
 * default). 'swiftcache-live-only' is the node-manager's earlier rule, live requests alone
 * (SessionDemand with a window of 0). 'swiftcache-lend-idle' has the master always short, so the
 * coordinator lends every idle worker unit — the paper's Algorithm 1, whose scale-down looks at the
 * worker's window alone.
 */
function systemTiers(system: TtftSystem, s: SwiftcacheSetup, hw: SwiftcacheHardware): SystemTiers {
  const m = hw.master;
  const local = kvBudgetBytes(hw.gpu.memBytes, m, s.chunkTokens, { utilization: s.utilization });
  if (system === 'offload')
    return { tiers: new SessionKvTiers([local, s.hostOffloadBytes]), links: [null, hw.pcie], admit: null, lenders: null, sessions: null };
  // The master's own region (whole blocks) less the planes of the longest context it may stream.
  const { regions, coordinator, members } = elasticLoan(hw.gpu.memBytes, s.workers, 0, s.workerLiveTokens, s, 'cache');
  const blockBytes = blockElements(kvShape(m, s.blockTokens)) * m.dtypeBytes;
  const longest = blocksFor(s.historyTokens[1] + s.turnInput.max + s.reply.max, s.blockTokens);
  const planes = streamPlaneBlocks({ layers: m.layers, window: s.window }, longest);
  // Behind the lent memory, Mnemo's host pool (the layer stream's, NODE_KV_STREAM_HOST_MB) with the
  // baseline's 96 GB, over the same PCIe link.
  const tiers = new SessionKvTiers([Math.max(0, regions.master - planes) * blockBytes, 0, s.hostOffloadBytes]);
  const sessions = new SessionDemand(system === 'swiftcache-live-only' ? 0 : s.elasticWindowMs);
  const admit = (nowMs: number, live: readonly LiveDemand[]) => {
    const demand = system === 'swiftcache-lend-idle' ? Number.MAX_SAFE_INTEGER : sessions.demand(nowMs, live);
    coordinator.observe('master', nowMs, demand);
    for (const w of members.slice(1)) coordinator.observe(w.id, nowMs, s.workerLiveTokens);
    coordinator.tick(nowMs);
    tiers.resize(1, coordinator.state('master').borrowedBlocks * blockBytes);
  };
  const lenders = () =>
    members.slice(1).map((w) => coordinator.state(w.id).lentBlocks * blockElements(w.shape) * MODELS[w.model].dtypeBytes);
  return { tiers, links: [null, hw.nvlink, hw.pcie], admit, lenders, sessions };
}

/** One system at one rate: P99/P50 TTFT of the measured requests, where their histories were, the links' traffic. */
export function runTtft(
  system: TtftSystem,
  work: TtftWork,
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  hw: SwiftcacheHardware = swiftcacheHardware(s),
): TtftRun {
  const m = hw.master;
  const kv = kvBytesPerToken(m);
  const compute = rooflineCompute(hw.gpu, m);
  const step = compute.efficiency.stepMs;
  const { tiers, links, admit, lenders, sessions } = systemTiers(system, s, hw);
  // Warm-up (§5.1): every session in rotation was served once before the first arrival.
  work.initial.forEach((x, i) => tiers.touch(x.session, x.history * kv, -work.initial.length + i));
  const reqs = work.requests;
  const need = (r: TtftRequest) => r.history + r.input + r.reply;
  const finish: number[] = new Array<number>(reqs.length);
  const ttft: number[] = [];
  const where = [0, 0, 0, 0]; // per tier, then recomputed
  let free = 0;
  let busy = 0;
  let loaded = 0;
  let lentLoaded = 0;
  let admitted = 0;
  let firstMeasured: number | null = null;
  let movedBefore = 0;
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i];
    const start = Math.max(r.at, free);
    // Admissions up to this start, each at its arrival: the node-manager's makeRoom records the
    // live requests (those not yet finished, queued ones included) plus the new one.
    for (; admit && admitted < reqs.length && reqs[admitted].at <= start; admitted++) {
      const at = reqs[admitted].at;
      const live: LiveDemand[] = [];
      for (let j = i - 1; j >= 0 && finish[j] > at; j--) live.push({ session: String(reqs[j].session), tokens: need(reqs[j]) });
      for (let j = i; j <= admitted; j++) live.push({ session: String(reqs[j].session), tokens: need(reqs[j]) });
      admit(at, live);
    }
    if (r.measured && firstMeasured === null) {
      firstMeasured = r.at;
      movedBefore = tiers.movedInto(1);
    }
    const tier = tiers.tierOf(r.session);
    const cached = tier === null ? 0 : r.history;
    const computed = r.input + (tier === null ? r.history : 0);
    const prefill = compute.prefillMs(1, computed, computed * cached + (computed * (computed + 1)) / 2) - step;
    const link = tier === null ? null : (links[tier] ?? null);
    const loadBytes = link ? r.history * kv : 0;
    const loadPerLayer = link ? link.dispatchMs + loadBytes / m.layers / link.bytesPerMs : 0;
    const service = layerwisePrefillMs(m.layers, loadPerLayer, prefill / m.layers) + step;
    free = start + service;
    finish[i] = free;
    tiers.touch(r.session, need(r) * kv, free);
    // As the node-manager does when a request leaves its store: the session held its whole turn.
    sessions?.served(String(r.session), free, need(r));
    if (r.warm) {
      tiers.remove(r.warm.ended);
      sessions?.ended(String(r.warm.ended));
      tiers.touch(r.warm.session, r.warm.history * kv, free);
    }
    if (r.measured) {
      ttft.push(free - r.at);
      busy += service;
      loaded += loadBytes;
      if (link === hw.nvlink) lentLoaded += loadBytes;
      where[tier ?? 3]++;
    }
  }
  // No measured request: the span runs from time 0.
  const spanMs = free - (firstMeasured ?? 0);
  const stored = tiers.movedInto(1) - movedBefore;
  const n = ttft.length;
  const lent = lenders?.();
  const lentTotal = lent?.reduce((a, b) => a + b, 0) ?? 0;
  return {
    ttft_p99_ms: round(percentile(ttft, 99), 1),
    ttft_p50_ms: round(percentile(ttft, 50), 1),
    utilization: round(busy / spanMs),
    history_in: lenders
      ? { local: round(where[0] / n), lent: round(where[1] / n), host: round(where[2] / n), recomputed: round(where[3] / n) }
      : { local: round(where[0] / n), host: round(where[1] / n), recomputed: round(where[3] / n) },
    ...(lenders ? { lent_gb: round(tiers.capacities[1] / 1e9, 1) } : {}),
    loaded_gb: round((lenders ? lentLoaded : loaded) / 1e9, 1),
    // SwiftCache: the lent tier's traffic (reads, and what moved down into it); offload: host.
    stored_gb: round(stored / 1e9, 1),
    span_s: round(spanMs / 1000, 1),
    // Bytes the master read from and wrote to each lender, split as each lends.
    ...(lent ? { per_worker_bytes: lent.map((l) => (lentTotal > 0 ? ((lentLoaded + stored) * l) / lentTotal : 0)) } : {}),
  };
}

/** Both systems at every rate, and the P99 ratio; `progress(label)` is told before each rate. */
export function ttftExperiment(s: SwiftcacheSetup = SWIFTCACHE_SETUP, progress: (label: string) => void = () => {}): TtftExperiment {
  const hw = swiftcacheHardware(s);
  const slots = sessionsInRotation(s, hw);
  return {
    sessions_in_rotation: slots,
    rates: s.ratesPerS.map((rate) => {
      progress(`P99 TTFT @ ${rate} req/s`);
      const work = ttftWorkload(rate, s, slots);
      const offload = runTtft('offload', work, s, hw);
      const swiftcache = runTtft('swiftcache', work, s, hw);
      const liveOnly = runTtft('swiftcache-live-only', work, s, hw);
      const lendIdle = runTtft('swiftcache-lend-idle', work, s, hw);
      return {
        rate_per_s: rate,
        offload,
        swiftcache,
        swiftcache_live_only: liveOnly,
        swiftcache_lend_idle: lendIdle,
        p99_ratio: round(offload.ttft_p99_ms / swiftcache.ttft_p99_ms),
        p99_ratio_live_only: round(offload.ttft_p99_ms / liveOnly.ttft_p99_ms),
        p99_ratio_lend_idle: round(offload.ttft_p99_ms / lendIdle.ttft_p99_ms),
      };
    }),
  };
}
