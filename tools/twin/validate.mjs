// `npm run twin -- validate`: runs the twin on the multi-round benchmark's own workload, cluster
// and cost model (bench/multiround, bench/results/multiround.json) with the costs this machine's
// calibration measured, and compares each system's TTFT with the live run's per-pass figures.
import { mean, median, SERVING_SYSTEMS } from '@mnemo/kv-core';
import { multiroundCluster, summarizeRun, TwinCluster } from '@mnemo/twin';
import { DEFAULT_WORKLOAD, workload } from '@mnemo/testkit';
import { measuredCosts, multiroundSetup } from './setup.mjs';

const round = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

/** What the twin leaves out, in words (docs/twin.md §Limits explains each). */
export const NOT_MODELLED = [
  'CPU contention between the processes: the live cluster runs 4 node-managers, a scheduler, NATS and the benchmark client on 2 shared cores (with other work beside them); the twin gives every process its own CPU, charging only the measured per-request and per-chunk CPU',
  'garbage collection pauses and JIT warm-up of the services',
  'the gateway (the benchmark talks to the scheduler over NATS directly, as the twin does)',
  'node deaths, dispatch timeouts, retries after a lost message, cancellations and deadlines (none happen in the benchmark)',
  'the layer stream cache, elastic borrowing between models, DroidSpeak cross-model reuse, swap preemption and priority scheduling (not used by the benchmark; recompute preemption is modelled)',
  'SSD journal syncs and compaction; SSD reads and writes share one queue per node only for reads',
  'the bytes themselves: KV content is not generated or verified (the live sim node regenerates and checks it; that CPU is in the calibrated restore and export costs)',
];

/** The systems and variants the live run has per-pass figures for, with how each is configured. */
function configurations(mr) {
  const names = [...new Set(mr.passes.flatMap((p) => Object.keys(p)))];
  return names.map((name) => {
    const described = mr.cluster?.systems?.[name];
    const base = SERVING_SYSTEMS[name] ?? (name.startsWith('symphony') ? SERVING_SYSTEMS.symphony : undefined);
    if (!base) throw new Error(`validate: the live run names a system the twin does not know: ${name}`);
    return {
      name,
      // A labelled A/B (bench --advisories-ab) runs symphony with its users silent: the twin's users are too.
      system: typeof described?.advisories === 'boolean' ? { ...base, advisories: described.advisories } : base,
      variant: { missed: described?.missed ?? 0, spurious: described?.spurious ?? 0 },
      nodeEnv: described?.node_env ?? {},
    };
  });
}

/** Live per-pass figures of one configuration. */
function live(mr, name) {
  const passes = mr.passes.map((p) => p[name]).filter(Boolean);
  const p50 = passes.map((p) => p.ttft_p50_ms);
  const p99 = passes.map((p) => p.ttft_p99_ms);
  return {
    passes: passes.map((p) => ({
      ttft_p50_ms: p.ttft_p50_ms,
      ttft_p99_ms: p.ttft_p99_ms,
      requests: p.requests,
      tpot_p50_ms: p.tpot_p50_ms,
      ...(p.load_average ? { load_average: p.load_average } : {}),
    })),
    ttft_p50_mean_ms: round(mean(p50), 2),
    ttft_p99_mean_ms: round(mean(p99), 2),
    ttft_p50_range_ms: [Math.min(...p50), Math.max(...p50)],
    ttft_p99_range_ms: [Math.min(...p99), Math.max(...p99)],
  };
}

/**
 * The mechanisms behind the TTFTs, live (every pass pooled) beside the twin (median over seeds):
 * where the two differ in latency, these say whether the same KV was found in the same places.
 */
function mechanisms(mr, name, runs) {
  const l = mr.policies?.[name] ?? mr.extras?.[name] ?? mr.variants?.[name];
  // The live summary pools every pass: counts per pass.
  const n = mr.passes.filter((p) => p[name]).length;
  const perPass = (x) => (typeof x === 'number' ? round(x / n, 1) : null);
  const share = (counts) => {
    const total = Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
    return total > 0 ? Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, round(v / total)])) : {};
  };
  const med = (f) => round(median(runs.map(f)));
  return {
    requests: { live: perPass(l?.requests), twin: med((r) => r.requests) },
    prefix_hit_rate: { live: l?.prefix_hit_rate ?? null, twin: med((r) => r.prefix_hit_rate) },
    restored_from_peers_tokens: { live: perPass(l?.restored_tokens?.from_peers), twin: med((r) => r.restored_tokens.from_peers) },
    restored_from_local_tiers_tokens: {
      live: perPass(l?.restored_tokens?.from_local_tiers),
      twin: med((r) => r.restored_tokens.from_local_tiers),
    },
    tpot_p50_ms: { live: l?.tpot_p50_ms ?? null, twin: med((r) => r.tpot_p50_ms) },
    routing_share: { live: share(l?.routing), twin: share(runs[0]?.routing) },
    // TTFT p50 of a session's first turns, of turns served where the previous one was and of turns moved to another node (their KV comes from a peer or a prefetch).
    by_move_ttft_p50_ms: Object.fromEntries(
      ['first', 'stayed', 'moved'].map((k) => [
        k,
        { live: l?.by_move?.[k]?.ttft_p50_ms ?? null, twin: med((r) => r.by_move?.[k]?.ttft_p50_ms ?? null) },
      ]),
    ),
    // Where TTFT goes: queued on the node, arrival there to the first token, and the path outside the nodes (live: mean over passes that recorded it).
    time_on_node: Object.fromEntries(
      ['queue_mean_ms', 'ttft_mean_ms', 'outside_nodes_mean_ms'].map((k) => {
        const xs = mr.passes.map((p) => p[name]?.time_on_node?.[k]).filter((x) => typeof x === 'number');
        return [k, { live: xs.length ? round(mean(xs), 2) : null, twin: med((r) => r.time_on_node?.[k] ?? null) }];
      }),
    ),
  };
}

/**
 * Not the validation, and never a headline: a check of a traced cause. Where the live nodes'
 * decode steps took longer than the cost model prices them (live TPOT above the twin's), each
 * live iteration waited about the difference beyond its modelled time, for a core on a shared
 * machine. The twin is run once more with every node iteration (prefill and decode) waiting that
 * long: if it then lands near the live TTFTs, the waiting explains the gap; if not, something else
 * is missing too.
 */
function contentionCheck({ mr, name, setup, c, costs, sessions, twinTpot, log }) {
  const tpots = mr.passes.map((p) => p[name]?.tpot_p50_ms).filter((x) => typeof x === 'number');
  if (tpots.length === 0 || twinTpot === null) return null;
  const waitMs = mean(tpots) - twinTpot;
  if (!(waitMs > 1)) return null;
  const o = costs.overheads;
  const waiting = { ...costs, overheads: { ...o, prefillCpuMs: o.prefillCpuMs + waitMs, decodeCpuMs: o.decodeCpuMs + waitMs } };
  const cluster = new TwinCluster(
    multiroundCluster(setup, c.system, waiting, { seed: 1, tenant: `twin-${name}`, variant: c.variant }),
    sessions,
  );
  cluster.run();
  const r = summarizeRun(cluster);
  log(`twin ${name} with ${round(waitMs, 1)} ms of waiting per iteration: p50 ${r.ttft_p50_ms} ms, p99 ${r.ttft_p99_ms} ms`);
  return {
    label: 'diagnostic, not fitted into the validation: every node iteration waits (live TPOT p50 − twin TPOT p50)',
    wait_per_iteration_ms: round(waitMs, 1),
    ttft_p50_ms: r.ttft_p50_ms,
    ttft_p99_ms: r.ttft_p99_ms,
    tpot_p50_ms: r.tpot_p50_ms,
    node_busy_share: r.node_busy_share,
  };
}

/** A live pass ran at the modelled speed when its TPOT p50 is within this factor of the twin's (no iteration waited for a core). */
export const UNCONTENDED_TPOT_RATIO = 1.1;

/**
 * Each live pass against the twin: how much slower its decode steps were than the twin's (the
 * cost model's), and the twin's p50 error against that pass alone. TPOT, not TTFT, says whether
 * the pass's nodes ran at the modelled speed; only those passes compare like with like.
 */
function perPass(l, twinP50, twinTpot) {
  return l.passes.map((p) => {
    const ratio = typeof p.tpot_p50_ms === 'number' && twinTpot ? p.tpot_p50_ms / twinTpot : null;
    return {
      load_average_before: p.load_average?.before ?? null,
      tpot_over_twin: round(ratio, 2),
      uncontended: ratio !== null && ratio <= UNCONTENDED_TPOT_RATIO,
      ttft_p50_error: round(Math.abs(twinP50 - p.ttft_p50_ms) / p.ttft_p50_ms),
    };
  });
}

const order = (entries) => entries.sort((a, b) => a[1] - b[1]).map(([k]) => k);

export function validate({
  mr,
  cal,
  seeds = [1, 2, 3],
  log = console.log,
  now = () => performance.now(),
  liveFile = 'bench/results/multiround.json',
}) {
  if (!Array.isArray(mr.passes) || mr.passes.length === 0)
    throw new Error('validate: bench/results/multiround.json has no per-pass figures (passes[]): run `npm run bench -- multiround` first');
  const options = { ...DEFAULT_WORKLOAD, ...(mr.workload?.options ?? {}) };
  const sessions = workload(options);
  const rampMs = (mr.workload?.users_start_over_s ?? 0) * 1000;
  const setup = multiroundSetup(mr, rampMs);
  const costs = measuredCosts(cal);
  const systems = {};
  for (const c of configurations(mr)) {
    if (c.nodeEnv.NODE_PREFETCH_PROMOTE === 'off') continue; // the promotion A/B is not part of the validation
    const runs = seeds.map((seed) => {
      const t0 = now();
      const cluster = new TwinCluster(
        multiroundCluster(setup, c.system, costs, { seed, tenant: `twin-${c.name}`, variant: c.variant }),
        sessions,
      );
      cluster.run();
      const s = { seed, ...summarizeRun(cluster), wall_s: round((now() - t0) / 1000, 1) };
      log(`twin ${c.name} seed ${seed}: p50 ${s.ttft_p50_ms} ms, p99 ${s.ttft_p99_ms} ms (${s.requests} requests, ${s.wall_s} s)`);
      return s;
    });
    const l = live(mr, c.name);
    const p50 = median(runs.map((r) => r.ttft_p50_ms));
    const p99 = median(runs.map((r) => r.ttft_p99_ms));
    systems[c.name] = {
      live: l,
      twin: {
        ttft_p50_ms: round(p50, 2),
        ttft_p99_ms: round(p99, 2),
        ttft_p50_range_ms: [Math.min(...runs.map((r) => r.ttft_p50_ms)), Math.max(...runs.map((r) => r.ttft_p50_ms))],
        ttft_p99_range_ms: [Math.min(...runs.map((r) => r.ttft_p99_ms)), Math.max(...runs.map((r) => r.ttft_p99_ms))],
        runs,
      },
      ttft_p50_error: round(Math.abs(p50 - l.ttft_p50_mean_ms) / l.ttft_p50_mean_ms),
      ttft_p99_error: round(Math.abs(p99 - l.ttft_p99_mean_ms) / l.ttft_p99_mean_ms),
      ttft_p99_in_live_range: p99 >= l.ttft_p99_range_ms[0] && p99 <= l.ttft_p99_range_ms[1],
      mechanisms: mechanisms(mr, c.name, runs),
      per_pass: perPass(l, p50, median(runs.map((r) => r.tpot_p50_ms))),
    };
    if (SERVING_SYSTEMS[c.name] && !SERVING_SYSTEMS[c.name].extra) {
      const check = contentionCheck({ mr, name: c.name, setup, c, costs, sessions, twinTpot: median(runs.map((r) => r.tpot_p50_ms)), log });
      if (check) systems[c.name].if_iterations_waited_as_live = check;
    }
  }
  const headline = Object.keys(systems).filter((k) => SERVING_SYSTEMS[k] && !SERVING_SYSTEMS[k].extra);
  const byLive = (metric) => order(headline.map((k) => [k, systems[k].live[`ttft_${metric}_mean_ms`]]));
  const byTwin = (metric) => order(headline.map((k) => [k, systems[k].twin[`ttft_${metric}_ms`]]));
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const orders = { live_p50: byLive('p50'), twin_p50: byTwin('p50'), live_p99: byLive('p99'), twin_p99: byTwin('p99') };
  // Pairs the twin orders unlike the live means, each with whether the live passes themselves
  // separated the two (ranges that overlap: the live run did not tell them apart).
  const disagreements = (metric) => {
    const live = orders[`live_${metric}`];
    const twin = orders[`twin_${metric}`];
    const out = [];
    for (let i = 0; i < live.length; i++) {
      for (let j = i + 1; j < live.length; j++) {
        if (twin.indexOf(live[i]) < twin.indexOf(live[j])) continue;
        const [a, b] = [systems[live[i]].live[`ttft_${metric}_range_ms`], systems[live[j]].live[`ttft_${metric}_range_ms`]];
        out.push({ live_faster: live[i], live_slower: live[j], live_ranges_overlap: a[1] >= b[0] && b[1] >= a[0] });
      }
    }
    return out;
  };
  const pick = (key) => Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v[key]]));
  return {
    inputs: {
      live: {
        file: liveFile,
        date: mr.run?.date ?? null,
        passes: mr.passes.length,
        users: setup.users,
        nodes: setup.nodes,
      },
      calibration: { file: 'bench/results/twin-calibration.json', date: cal.run?.date ?? null },
      // The reference-engine run's compute port: fitted on its calibration seed's steps, never on the passes compared here.
      ...(mr.engine_fit
        ? {
            compute: {
              fitted_on_seed: mr.engine_fit.seed,
              validated_on_seed: mr.workload?.options?.seed ?? null,
              cost: mr.engine_fit.cost,
            },
          }
        : {}),
      workload: "libs/testkit/src/workloads/multiround.workload.ts workload(options) with the live run's options: the same sessions",
      seeds,
    },
    validation: {
      ttft_p50_error: pick('ttft_p50_error'),
      ttft_p50_error_max: round(Math.max(...Object.values(pick('ttft_p50_error')))),
      ttft_p50_error_target: 0.15,
      ttft_p99_error: pick('ttft_p99_error'),
      // The same error against only the passes that ran at the modelled speed (null: none did).
      ttft_p50_error_uncontended: Object.fromEntries(
        Object.entries(systems).map(([k, v]) => {
          const ok = v.per_pass.filter((p) => p.uncontended);
          return [k, ok.length ? Math.max(...ok.map((p) => p.ttft_p50_error)) : null];
        }),
      ),
      uncontended_passes: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.per_pass.filter((p) => p.uncontended).length])),
      uncontended_rule: `a live pass whose TPOT p50 is within ${UNCONTENDED_TPOT_RATIO}× the twin's: its nodes ran at the modelled speed`,
      ttft_p99_live_range_ms: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.live.ttft_p99_range_ms])),
      ttft_p99_twin_ms: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.twin.ttft_p99_ms])),
      ttft_p99_in_live_range: pick('ttft_p99_in_live_range'),
      policy_order_matches: same(orders.live_p50, orders.twin_p50) && same(orders.live_p99, orders.twin_p99),
      policy_order_p50_matches: same(orders.live_p50, orders.twin_p50),
      policy_order_p99_matches: same(orders.live_p99, orders.twin_p99),
      // Reported beside the strict key, never in its place: the twin against only the orders the live passes settled.
      policy_order_matches_where_live_separates: [...disagreements('p50'), ...disagreements('p99')].every((d) => d.live_ranges_overlap),
      order: orders,
      order_disagreements: { p50: disagreements('p50'), p99: disagreements('p99') },
      headline_systems: headline,
    },
    systems,
    not_modelled: NOT_MODELLED,
  };
}
