// What the Symphony results file says beside its keys: the paper's baseline figures against the
// twin's, why each paper-band headline lands where it does, and the hardware the runs modelled.
import { derivedDispatchMs, kvBytesPerToken } from '../../costs/hardware.tables.js';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import { baselineCheck, type BaselineCheck } from '../../report/baseline.check.js';
import { hardwareLinks, routingFigures, SYMPHONY_HARDWARE, type GpuHardware } from '../../scenario/gpu-cluster.scenario.js';
import { roundFigure as round, type Curves } from '../shared/paper-run.js';
import { fig15, type SymphonyKeys } from './symphony.keys.js';
import type { SymphonyRunFigures } from './symphony.noise.js';
import { SYMPHONY_RUN, type SymphonySetup } from './symphony.setup.js';

/**
 * Symphony's published baseline figures beside the twin's (error = twin ÷ paper − 1): the paper's
 * vLLM at 64 users (Fig. 11 caption), and one A100's decode step at 32 requests over 8 (Fig. 2, ≈ 2×;
 * the context is not stated: the twin's is 4K tokens per request).
 */
export function symphonyBaselineChecks(
  curves: Curves<SymphonyRunFigures>,
  o: SymphonySetup = SYMPHONY_RUN,
  hw: GpuHardware = SYMPHONY_HARDWARE,
): Record<'fig11_vllm_tpot_64_users_ms' | 'fig2_tpot_32_over_8_requests', BaselineCheck> {
  const compute = rooflineCompute(hw.gpu, hw.model, hw.efficiency);
  const tpot64 = o.paperBaseline ? (curves[o.paperBaseline]?.[o.users[0]]?.tpot_mean_ms ?? null) : null;
  return {
    fig11_vllm_tpot_64_users_ms: baselineCheck(
      18.5,
      tpot64,
      'Fig. 11 caption: vLLM (no prefix cache) at 64 users',
      "the twin's vLLM-as-paper decodes at the roofline's memory-bound step; the paper's engine adds what the roofline leaves out",
    ),
    fig2_tpot_32_over_8_requests: baselineCheck(
      2,
      compute.decodeMs(32, 32 * 4096) / compute.decodeMs(8, 8 * 4096),
      'Fig. 2: TPOT ≈ 2× from 8 to 32 requests on one A100 (context not stated; 4K tokens each here)',
      'the roofline reads the weights once per step, so 4× the requests costs less than 2× at 4K tokens each',
    ),
  };
}

/** What {@link symphonyCauses} reads of a results file (a file read back: its user counts are strings). */
export interface SymphonyResultsFigures {
  readonly symphony: Pick<SymphonyKeys, 'vllm_baseline' | 'tpot_slo_ms'> & {
    readonly by_users?: Readonly<Record<string, Readonly<Record<string, number | null>>>>;
    readonly users_within_slo?: Readonly<Record<string, number | null>>;
  };
  readonly curves?: Curves<SymphonyRunFigures>;
  readonly setup?: { readonly run?: SymphonySetup };
}

/**
 * Why each paper-band headline lands where it does, traced from a results file's own keys and curves
 * (shown only for a headline outside its band: libs/testkit/src/results/report.ts headlinesInBand).
 */
export function symphonyCauses({ symphony: k, curves, setup }: SymphonyResultsFigures): Record<string, string> {
  const o = setup?.run ?? SYMPHONY_RUN;
  const base = k.vllm_baseline ?? 'recompute';
  const by = k.by_users?.ttft_vs_vllm ?? {};
  const top = Object.entries(by).reduce<[string | null, number | null]>((a, b) => ((b[1] ?? 0) > (a[1] ?? 0) ? b : a), [null, 0])[0];
  // A count that is no key (no sweep: `top` null) finds no run, and its figures print as undefined.
  const at = (s: string, u: string | number | null): SymphonyRunFigures => curves?.[s]?.[Number(u)] ?? {};
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`);
  const inf = at(fig15(o), o.imbalanceUsers);
  const short = at('infercept', o.imbalanceUsers);
  const first = o.users[0];
  const tpots = (s: string) => o.users.map((u) => [u, at(s, u).tpot_mean_ms ?? null] as const);
  const cross = (s: string) => (k.tpot_slo_ms === null ? null : sloCrossingUsers(tpots(s), k.tpot_slo_ms));
  const [cs, cb] = [cross('symphony'), cross(base)];
  const crossing = { symphony: cs && Math.round(cs), base: cb && Math.round(cb), ratio: cs && cb ? round(cs / cb, 2) : null };
  return {
    'symphony.ttft_vs_vllm':
      `largest at ${top} users: ${base} recomputes each turn's whole history (mean TTFT ${at(base, top).ttft_mean_ms} ms, ` +
      `${pct(at(base, top).prefix_hit_rate)} of prompt tokens cached) where symphony finds ${pct(at('symphony', top).prefix_hit_rate)} ` +
      `cached (${at('symphony', top).ttft_mean_ms} ms); the paper gives no hit rates to say which side differs`,
    'symphony.tpot_vs_vllm': `largest over the sweep; ${base}'s mean TPOT at ${top} users is ${at(base, top).tpot_mean_ms} ms`,
    'symphony.users_vs_vllm_at_slo':
      `${base}'s mean TPOT is ${at(base, first * 2).tpot_mean_ms} ms at ${first * 2} users, inside the SLO (${k.tpot_slo_ms} ms = ` +
      `${o.sloOverLightest} × its ${at(base, first).tpot_mean_ms} ms at ${first}), where the paper's vLLM was past it; symphony meets ` +
      `it up to ${k.users_within_slo?.symphony} users. Not the sweep's doubling: read between the swept counts, the mean TPOTs ` +
      `cross the SLO near ${crossing.symphony ?? '—'} users (symphony) and ${crossing.base ?? '—'} (${base}), a ratio of ` +
      `${crossing.ratio ?? '—'}`,
    'symphony.infercept_imbalance_256':
      `users held per instance over the ${inf.measured_window_s} s after the warm-up: ${inf.users_per_instance?.join(', ')} ` +
      `(max ÷ median ${inf.imbalance_users_max_over_median}; over the ${short.measured_window_s} s window ` +
      `${short.imbalance_users_max_over_median}): each session is placed on the least-loaded instance at its first turn and ` +
      'held there, so users are dealt out evenly and a longer run evens them further. The paper names the same rule (fewest ' +
      'active requests) and states no run length or load signal that would pile users onto one instance',
    'symphony.ttft_vs_infercept': `at ${o.compareUsers} users: infercept ${at('infercept', o.compareUsers).ttft_mean_ms} ms mean TTFT`,
  };
}

/**
 * Where a TPOT curve crosses the SLO, by linear interpolation between the largest swept count that
 * meets it and the next one: the users a finer sweep would find. The top count when it meets the
 * SLO throughout (a lower bound); null when the first count already misses it or a figure is absent.
 */
export function sloCrossingUsers(curve: ReadonlyArray<readonly [number, number | null]>, slo: number): number | null {
  let i = -1;
  while (i + 1 < curve.length && curve[i + 1]![1] !== null && curve[i + 1]![1]! <= slo) i++;
  if (i < 0) return null;
  const [u0, t0] = curve[i]!;
  const next = curve[i + 1];
  if (!next) return u0;
  const [u1, t1] = next;
  if (t1 === null) return u0;
  return u0 + ((slo - t0!) / (t1 - t0!)) * (u1 - u0);
}

/** The hardware and routing figures of the run, for the results file. */
export function symphonyHardware(hw: GpuHardware = SYMPHONY_HARDWARE) {
  const compute = rooflineCompute(hw.gpu, hw.model, hw.efficiency);
  return {
    gpu: hw.gpu,
    model: { ...hw.model, kv_bytes_per_token: kvBytesPerToken(hw.model) },
    efficiency: hw.efficiency,
    instances: hw.instances,
    host_pool_gib: hw.hostPoolBytes / 1024 ** 3,
    ssd_pool_gib: hw.ssdPoolBytes / 1024 ** 3,
    links: hardwareLinks(hw),
    routing_ms_per_chunk: Object.fromEntries(Object.entries(routingFigures(hw, compute)).map(([k, v]) => [k, round(v, 3)])),
    step_ms: {
      decode_1x1k: round(compute.decodeMs(1, 1024), 2),
      decode_32x4k: round(compute.decodeMs(32, 32 * 4096), 2),
      decode_8x4k: round(compute.decodeMs(8, 8 * 4096), 2),
      prefill_2k: round(compute.prefillMs(1, 2048, 2048 * 1024), 2),
    },
    fastswitch_derived_dispatch_ms: round(derivedDispatchMs(), 4),
  };
}
