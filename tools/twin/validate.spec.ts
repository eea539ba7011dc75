import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { DEFAULT_WORKLOAD, workload } from '@mnemo/testkit';
import { validateAgainstLive, type CalibrationFile, type LiveRun, type ValidateOptions } from '@mnemo/twin';

/** The sim benchmark's settings as bench/multiround/cluster.mjs fixes them (what tools/twin/validate.mjs passes in). */
const ports = {
  sessions: (options: object) => workload({ ...DEFAULT_WORKLOAD, ...options }),
  bench: {
    cluster: {
      nodes: 4,
      model: 'mnemo-medium',
      kvBlocks: 2048,
      maxBatch: 16,
      maxContext: 16_384,
      hostPool: '64MiB',
      ssdPool: '128MiB',
      heartbeatMs: 200,
    },
    gpu: { prefillTokenUs: 40, decodeStepMs: 6, decodeSeqUs: 50, decodeKContextUs: 38, restoreChunkUs: 1400 },
    dilation: 2,
    kvLayers: 8,
    kvBytesPerToken: 256,
  },
};
const validate = (o: Omit<ValidateOptions, 'mr' | 'cal'> & { mr: object; cal: object }) =>
  validateAgainstLive(ports, { ...o, mr: o.mr as LiveRun, cal: o.cal as CalibrationFile });

// validate() against the shape `npm run bench -- multiround --quick` writes: a few short sessions,
// one pass, the live figures per configuration in `passes`. The twin runs for real; the live
// figures are inputs, so what is checked is how the two are compared and reported.
const systems = {
  symphony: { passes: 2 },
  recompute: { passes: 2 },
  'symphony-missed10': { missed: 0.1, passes: 1 },
  'symphony-host-only': { node_env: { NODE_PREFETCH_PROMOTE: 'off' }, passes: 1 },
};
const pass = (p50: number, p99: number, requests = 40) => ({
  ttft_p50_ms: p50,
  ttft_p99_ms: p99,
  requests,
  load_average: { before: 1, after: 1 },
});
const live = (passes: object[]) => ({
  env: { users: 4, quick: true, passes: passes.length },
  cluster: { nodes: 2, systems },
  kv_bytes: { scheduler_costs_ms_per_chunk: { host: 1, ssd: 4, peer_network: 3, recompute: 20 } },
  cost_model: { pcie_restore_chunk_us: 2800 },
  workload: {
    options: { ...DEFAULT_WORKLOAD, sessions: 6, maxTurns: 4, thinkCompression: 4 * DEFAULT_WORKLOAD.thinkCompression },
    users_start_over_s: 2,
  },
  policies: {
    symphony: {
      requests: 80,
      prefix_hit_rate: 0.5,
      routing: { cheapest: 60, reservation: 20 },
      by_move: {
        first: { requests: 12, ttft_p50_ms: 90 },
        stayed: { requests: 40, ttft_p50_ms: 80 },
        moved: { requests: 28, ttft_p50_ms: 150 },
      },
    },
  },
  passes,
});
const link = (dispatch_ms: number, bytes_per_ms: number) => ({ dispatch_ms, bytes_per_ms });
const cal = {
  overheads: {
    nats_ms: [0.3, 0.5, 2],
    timer_lag_ms: [0.1, 0.3, 1],
    loop_turn_ms: [0.01],
    client_ms_per_ktoken: 0.04,
    schedule_ms: 0.1,
    admit_ms_per_ktoken: 0.03,
    export_ms_per_chunk: 0.2,
    prefill_cpu_ms: 0.1,
    prefill_cpu_ms_per_ktoken: 0.3,
    decode_cpu_ms: 0.01,
    decode_cpu_ms_per_seq: 0.004,
  },
  links: {
    host_load: link(0.03, 1e6),
    peer: link(6, 1e4),
    ssd_read: link(0.15, 2e7),
    host_write: link(0.02, 1e7),
    ssd_write: link(0.15, 2e7),
  },
};

describe('validate (twin against the live multi-round run)', () => {
  const mr = live([
    { symphony: pass(100, 900), recompute: pass(300, 2000), 'symphony-missed10': pass(110, 950), 'symphony-host-only': pass(100, 900) },
    { symphony: pass(140, 1100), recompute: pass(260, 2400) },
  ]);
  const out = validate({ mr, cal, seeds: [1], log: () => undefined });

  it('compares every configuration with live per-pass figures, but not the promotion A/B', () => {
    expect(Object.keys(out.systems).sort()).toEqual(['recompute', 'symphony', 'symphony-missed10']);
    expect(out.validation.headline_systems.sort()).toEqual(['recompute', 'symphony']);
  });

  it('takes the live figure as the mean of the passes, with their range, and reports the error against it', () => {
    const s = out.systems.symphony!;
    expect(s.live.ttft_p50_mean_ms).toBe(120);
    expect(s.live.ttft_p99_range_ms).toEqual([900, 1100]);
    expect(s.live.passes).toHaveLength(2);
    expect(s.ttft_p50_error).toBeCloseTo(Math.abs(s.twin.ttft_p50_ms - 120) / 120, 2);
    expect(out.validation.ttft_p50_error_max).toBe(Math.max(...Object.values(out.validation.ttft_p50_error)));
    expect(out.validation.ttft_p99_live_range_ms.recompute).toEqual([2000, 2400]);
  });

  it('runs the live workload: every session turn is a request in the twin', () => {
    const requests = out.systems.symphony!.twin.runs[0]!.requests;
    expect(requests).toBeGreaterThan(6);
    expect(out.systems.symphony!.mechanisms.requests).toEqual({ live: 40, twin: requests });
  });

  it("sets the live TTFT of first, stayed and moved turns beside the twin's", () => {
    const m = out.systems.symphony!.mechanisms.by_move_ttft_p50_ms as Record<string, { live: number | null; twin: number | null }>;
    expect(m.moved!.live).toBe(150);
    expect(m.stayed!.live).toBe(80);
    expect(typeof m.first!.twin).toBe('number');
    expect(out.systems.recompute!.mechanisms.by_move_ttft_p50_ms).toBeDefined();
  });

  it("charges the request path and the node's own paths where the calibration timed them whole", () => {
    const timed = {
      ...cal,
      overheads: {
        ...cal.overheads,
        request_path_ms: [20],
        node_prefill_path_ms: 5,
        node_prefill_path_ms_per_ktoken: 0,
        node_decode_path_ms: 3,
      },
    };
    const r = validate({ mr, cal: timed, seeds: [1], log: () => undefined });
    const t = r.systems.recompute!.mechanisms.time_on_node as Record<string, { twin: number }>;
    expect(t.outside_nodes_mean_ms!.twin).toBeCloseTo(20, 1);
    expect((out.systems.recompute!.mechanisms.time_on_node as Record<string, { twin: number }>).outside_nodes_mean_ms!.twin).toBeLessThan(
      7,
    );
    // Slower steps on the node: every decode step waits 3 ms more than the batch loop's CPU alone.
    expect(r.systems.recompute!.twin.runs[0]!.tpot_p50_ms!).toBeGreaterThan(out.systems.recompute!.twin.runs[0]!.tpot_p50_ms! + 2);
  });

  it("fits a reference-engine run's request path on its calibration pass, and leaves a sim run's as calibrated", () => {
    expect((out.inputs as { request_path?: unknown }).request_path).toBeUndefined();
    const base = (out.systems.symphony!.mechanisms.time_on_node as Record<string, { twin: number }>).outside_nodes_mean_ms!.twin;
    const engine = {
      ...mr,
      engine_fit: {
        seed: 7,
        cost: { ...DEFAULT_SIM_COST, prefillPerTokenMs: 0.08, decodeBaseMs: 12 },
        calibration_run: { time_on_node: { outside_nodes_mean_ms: 3 * base } },
      },
    };
    const r = validate({ mr: engine, cal, seeds: [1], log: () => undefined });
    const path = (r.inputs as { request_path?: { fitted_on_seed: number; scale: number; converged: boolean } }).request_path!;
    expect(path.fitted_on_seed).toBe(7);
    expect(path.scale).toBeGreaterThan(1.5);
    const twin = (r.systems.symphony!.mechanisms.time_on_node as Record<string, { twin: number }>).outside_nodes_mean_ms!.twin;
    expect(twin).toBeGreaterThan(2 * base);
  });

  it('orders the headline systems by the live and the twin figures', () => {
    expect(out.validation.order.live_p50).toEqual(['symphony', 'recompute']);
    const twinOrder = [...out.validation.headline_systems].sort(
      (a, b) => out.systems[a]!.twin.ttft_p50_ms - out.systems[b]!.twin.ttft_p50_ms,
    );
    expect(out.validation.order.twin_p50).toEqual(twinOrder);
    expect(out.validation.policy_order_matches).toBe(out.validation.policy_order_p50_matches && out.validation.policy_order_p99_matches);
    expect(out.validation.order_disagreements.p50.length === 0).toBe(out.validation.policy_order_p50_matches);
    const all = [...out.validation.order_disagreements.p50, ...out.validation.order_disagreements.p99];
    expect(out.validation.policy_order_matches_where_live_separates).toBe(all.every((d) => d.live_ranges_overlap));
  });

  it('tells an order the live passes settled from one they did not', () => {
    // Live: recompute slower than symphony in every pass. A twin that had them the other way round must not pass.
    const swapped = live([
      { symphony: pass(300, 2400), recompute: pass(100, 900) },
      { symphony: pass(310, 2500), recompute: pass(110, 950) },
    ]);
    const r = validate({ mr: swapped, cal, seeds: [1], log: () => undefined });
    const d = r.validation.order_disagreements.p50;
    expect(d).toEqual([{ live_faster: 'recompute', live_slower: 'symphony', live_ranges_overlap: false }]);
    expect(r.validation.policy_order_matches_where_live_separates).toBe(false);
  });

  it(
    'checks a slower live run against the twin with each node iteration ' + 'waiting what the live TPOT says, apart from the validation',
    () => {
      expect(out.systems.symphony!.if_iterations_waited_as_live).toBeUndefined();
      const slow = (p50: number) => ({ ...pass(p50, 10 * p50), tpot_p50_ms: 400 });
      const waited = validate({ mr: live([{ symphony: slow(3000), recompute: slow(4000) }]), cal, seeds: [1], log: () => undefined });
      const s = waited.systems.symphony!;
      expect(s.if_iterations_waited_as_live!.wait_per_iteration_ms).toBeGreaterThan(300);
      expect(s.if_iterations_waited_as_live!.tpot_p50_ms!).toBeGreaterThan(300);
      expect(s.if_iterations_waited_as_live!.ttft_p50_ms!).toBeGreaterThan(s.twin.ttft_p50_ms);
      // The validation's own figures are the twin's, whatever the check found.
      expect(s.twin.ttft_p50_ms).toBe(out.systems.symphony!.twin.ttft_p50_ms);
    },
  );

  it('compares the twin with each pass alone, and apart with the passes whose decode steps ran at the modelled speed', () => {
    const twin = out.systems.symphony!.twin;
    const tpot = twin.runs[0]!.tpot_p50_ms!;
    const passes = [
      { symphony: { ...pass(200, 900), tpot_p50_ms: tpot }, recompute: { ...pass(300, 2000), tpot_p50_ms: 5 * tpot } },
      { symphony: { ...pass(900, 9000), tpot_p50_ms: 4 * tpot }, recompute: { ...pass(900, 9000), tpot_p50_ms: 4 * tpot } },
    ];
    const v = validate({ mr: live(passes), cal, seeds: [1], log: () => undefined });
    const s = v.systems.symphony!;
    expect(s.per_pass.map((p) => p.uncontended)).toEqual([true, false]);
    expect(s.per_pass[1]!.tpot_over_twin).toBeCloseTo(4, 1);
    expect(v.validation.uncontended_passes).toEqual({ symphony: 1, recompute: 0 });
    expect(v.validation.ttft_p50_error_uncontended.symphony).toBeCloseTo(Math.abs(s.twin.ttft_p50_ms - 200) / 200, 2);
    expect(v.validation.ttft_p50_error_uncontended.recompute).toBeNull();
  });

  it('refuses a results file without per-pass figures, and a system it does not know', () => {
    expect(() => validate({ mr: { ...mr, passes: [] }, cal, seeds: [1], log: () => undefined })).toThrow(/per-pass/);
    expect(() => validate({ mr: live([{ vllm: pass(1, 2) }]), cal, seeds: [1], log: () => undefined })).toThrow(/does not know: vllm/);
  });
});
