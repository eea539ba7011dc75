// What FastSwitch's experiment on the twin reports beside its runs: the paper's baseline figures
// against the twin's, and the traced causes of the headlines.
import { dispatchBandMs } from '../../costs/hardware.tables.js';
import { baselineCheck, type BaselineCheck } from '../../report/baseline.check.js';
import { fastswitchRatios, type FastswitchPair, type FastswitchRatios, type FastswitchRun, type Table1Ratios } from './fastswitch.run.js';
import { fastswitchHardware, round, type FastswitchSetup, type FastswitchSystem } from './fastswitch.setup.js';

const TABLE1 = "Table 1 (§5.3.3): FastSwitch's own swap-outs in the run, each also priced as a traditional one copying every block";

/** The paper's regime: the lowest per-call dispatch §2.2 allows (90% of a copy that executes in 10 µs: 90 µs). */
export const fastswitchPaperDispatchMs = (): number => dispatchBandMs()[0];

/** A pair of runs at one per-call dispatch (µs). */
export interface FastswitchPoint extends FastswitchPair {
  readonly dispatch_us: number;
}

/** Each of FastSwitch's mechanisms alone, with its ratios against vLLM at the same dispatch. */
export type FastswitchAblation = Readonly<Record<Exclude<FastswitchSystem, 'vllm' | 'fastswitch'>, FastswitchRun & FastswitchRatios>>;

/** The runs the baseline checks read. */
export interface FastswitchCheckedRuns {
  /** vLLM and FastSwitch at the paper's dispatch, with Table 1's ratios as the median over the curve's seeds. */
  readonly at: FastswitchPoint & { readonly table1: Table1Ratios };
  /** Each mechanism alone at the paper's dispatch, with its ratios against vLLM there. */
  readonly ablation: FastswitchAblation;
  /** vLLM and FastSwitch at the measured dispatch (Table 1's ratios likewise), and the paper's groups alone there. */
  readonly ours: FastswitchPoint & { readonly table1: Table1Ratios };
  readonly groupsPaperLayoutOurs: FastswitchRun;
  readonly s: FastswitchSetup;
}

/**
 * The paper's published baseline figures beside the twin's (error = twin ÷ paper − 1). Table 1 is
 * §5.3.3's KV-reuse microbenchmark (its model and trace not stated): its ratios are read inside
 * FastSwitch's own runs. §2.2's dispatch share holds by construction in the paper's regime.
 */
export function fastswitchBaselineChecks({
  at,
  ablation,
  ours,
  groupsPaperLayoutOurs,
  s,
}: FastswitchCheckedRuns): Record<string, BaselineCheck> {
  // Table 1 compares two ways of making the same swap-outs (its copies already grouped: 9.3 blocks an
  // operation), so the twin reads it inside FastSwitch's own runs: each swap-out as made, with host-copy
  // reuse, against the same swap-out copying every block. Operations are copy calls. Like the headline
  // `swap_out_reduction` (1 − the blocks ratio), each is the median over the curve's seeds: which swap-outs
  // find their copy still valid moves with the draw as much as a P99 does.
  const [paper, measured] = [at.table1, ours.table1];
  const paperGroups = ablation['groups-only-vllm-layout'];
  const copy = 128 * 1024; // §2.2's 128 KB copy
  const share = (d: number): number => d / (d + copy / fastswitchHardware(s).pcie.bytesPerMs);
  const why = {
    blocks:
      "the twin's host copies are kept until host memory runs out and then given up least recently used first, so a " +
      'conversation preempted again soon after its last swap-out finds most of its blocks still valid; how often ' +
      "the paper's copies were contaminated by higher-priority requests (§3.3) is not stated",
    operations:
      'a reused prefix leaves one copy per run of new blocks, so calls fall by less than blocks do, as in Table 1; ' +
      "they fall further here because the twin's host copies stay valid until host memory runs out, so fewer blocks " +
      "are new at each swap-out; how often the paper's copies were contaminated by higher-priority requests (§3.3) is " +
      'not stated',
    latency:
      "each copy is priced as calls × dispatch + bytes ÷ bandwidth: at the paper's dispatch the calls dominate and the " +
      'ratio follows the operations row, at the measured one the bytes do and it follows the blocks row; Table 1 lies ' +
      "between them (0.43, under both of its own other ratios), which the twin's single per-call price does not reproduce",
    groups:
      `at the paper's dispatch vLLM's copies (64 a block) stall it for ${round(at.vllm.switch_share * 100, 1)}% of the run, ` +
      "so it falls behind its arrivals and preempts more, while the paper's groups alone on that layout make " +
      `${paperGroups.swap_out_calls} swap-out calls for ${paperGroups.swap_out_blocks} blocks; grouping saves nearly ` +
      "all of vLLM's stall, and Fig. 10's 3.11× is met only near the measured dispatch",
  };
  return {
    table1_blocks_reuse_over_traditional: baselineCheck(0.48, paper.blocks, TABLE1, why.blocks),
    table1_operations_reuse_over_traditional: baselineCheck(0.82, paper.operations, TABLE1, why.operations),
    table1_latency_reuse_over_traditional: baselineCheck(0.43, paper.latency, TABLE1, why.latency),
    table1_latency_reuse_over_traditional_measured_dispatch: baselineCheck(
      0.43,
      measured.latency,
      `${TABLE1}, the twin at the measured 2.47 µs dispatch`,
      why.latency,
    ),
    fig10_groups_switch_overhead: baselineCheck(
      3.11,
      paperGroups.switch_overhead_ratio,
      "Fig. 10 (block groups alone, up to 3.11×): the paper's groups on vLLM's per-layer KV layout",
      why.groups,
    ),
    fig10_groups_switch_overhead_measured_dispatch: baselineCheck(
      3.11,
      fastswitchRatios(ours.vllm, groupsPaperLayoutOurs).switch_overhead_ratio,
      "Fig. 10 (block groups alone) on vLLM's per-layer KV layout, the twin at the measured 2.47 µs dispatch",
      why.groups,
    ),
    s22_dispatch_share_of_128kb_copy: baselineCheck(
      0.925,
      share(fastswitchPaperDispatchMs()),
      '§2.2 (dispatch 90–95% of a 128 KB copy on the A10; mid-point)',
    ),
  };
}

/** The prefill-with-prefix pairs at the paper's and the measured dispatch. */
export type FastswitchPrefixKept = Readonly<Record<'paper_dispatch' | 'measured_dispatch', FastswitchPoint>>;

/** What {@link fastswitchCausesOf} reads of a results file (`npm run twin -- bands` re-judges old files too). */
export interface FastswitchResultsFigures {
  readonly curve: readonly FastswitchPoint[];
  readonly fastswitch: { readonly dispatch_us: number; readonly measured_dispatch: { readonly dispatch_us: number } };
  readonly setup: { readonly workload: { readonly arrival_span_s: number } };
  readonly prefix_kept?: FastswitchPrefixKept;
}

/** Why the paper-regime headlines land where they do, from a results file's own figures. */
export function fastswitchCausesOf(json: FastswitchResultsFigures): Record<string, string> {
  const at = json.curve.find((p) => p.dispatch_us === json.fastswitch.dispatch_us);
  const ours = json.curve.find((p) => p.dispatch_us === json.fastswitch.measured_dispatch.dispatch_us);
  if (!at || !ours) throw new Error('fastswitchCausesOf: the headline dispatches are not on the curve');
  return fastswitchCauses(at, ours, json.setup.workload.arrival_span_s, json.prefix_kept);
}

/** Why the paper-regime headlines land where they do, traced from the runs' own figures. */
export function fastswitchCauses(
  at: FastswitchPoint,
  ours: FastswitchPoint,
  spanS: number,
  prefixKept?: FastswitchPrefixKept,
): Record<string, string> {
  const span = round(spanS, 0);
  const v = at.vllm;
  const stall =
    `at ${at.dispatch_us} µs per call the twin's vLLM makes ${v.swap_out_calls} swap-out calls (64 per block: K and V of ` +
    `every layer) in ${v.swap_outs} preemptions and stands still for copies ${round(v.switch_share * 100, 1)}% of the run ` +
    `(${v.simulated_s} s simulated for ${span} s of arrivals); at the measured ${ours.dispatch_us} µs the same ratio is ` +
    `${ours.p99_ttft_ratio}, so the paper's vLLM must issue fewer or cheaper calls than §2.2's reading implies. Both of the ` +
    "paper's systems also prefill each turn with its prefix kept (§4, Implementation), where the twin's recompute the " +
    'whole history each turn (vLLM 0.3.3 as released): more prefill work, so more preemptions and swaps for vLLM' +
    (prefixKept
      ? `. Read as each turn's KV parked in host memory between turns (prefix_kept), the ratio is ` +
        `${prefixKept.paper_dispatch.p99_ttft_ratio} at ${prefixKept.paper_dispatch.dispatch_us} µs (vLLM stands still for copies ` +
        `${round(prefixKept.paper_dispatch.vllm.switch_share * 100, 1)}% of the run: every turn's end copies its KV at 64 calls a block) ` +
        `and ${prefixKept.measured_dispatch.p99_ttft_ratio} at ${prefixKept.measured_dispatch.dispatch_us} µs, so that reading does not ` +
        "reproduce the paper's vLLM either: the paper does not say where vLLM keeps a conversation's KV between turns"
      : '');
  return {
    'fastswitch.p99_ttft_ratio': stall,
    'fastswitch.p999_tbt_ratio': stall,
    'fastswitch.swap_out_reduction':
      `host-copy reuse cut ${at.swap_out_reduction} of the blocks FastSwitch's swap-outs would copy without it (median over ` +
      `the seeds; the first left ${at.fastswitch.swap_out_blocks} of ${at.fastswitch.traditional_swap_out.blocks}): the twin ` +
      'keeps a copy valid until host memory runs out, and how often ' +
      "the paper's copies were contaminated by higher-priority requests (§3.3) is not stated",
  };
}
