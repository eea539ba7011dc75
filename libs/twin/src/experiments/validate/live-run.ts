import type { SimCostModel } from '@mnemo/engine';
import type { LivePeerPulls } from './peer-link.fit.js';

/** One configuration's figures in one live pass (bench/multiround/summary.mjs passFigures). */
export interface LivePassFigures {
  readonly ttft_p50_ms: number;
  readonly ttft_p99_ms: number;
  readonly requests?: number;
  readonly tpot_p50_ms?: number;
  readonly load_average?: { readonly before: number; readonly after: number };
  readonly time_on_node?: Readonly<Record<string, number | undefined>>;
}

/** One configuration's summary over every live pass, as far as the validation reads it. */
export interface LiveSummary {
  readonly requests?: number;
  readonly prefix_hit_rate?: number;
  readonly tpot_p50_ms?: number;
  readonly routing?: Readonly<Record<string, number>>;
  readonly restored_tokens?: { readonly from_peers?: number; readonly from_local_tiers?: number };
  readonly by_move?: Readonly<Record<string, { readonly ttft_p50_ms?: number } | undefined>>;
}

/** How the live run described a configuration (cluster.systems). */
export interface LiveSystemDescription {
  readonly advisories?: boolean;
  readonly missed?: number;
  readonly spurious?: number;
  readonly node_env?: Readonly<Record<string, string>>;
}

/** The live cluster's sizes as the results file records them (the benchmark's CLUSTER). */
export interface LiveCluster {
  readonly nodes: number;
  readonly model: string;
  readonly kvBlocks: number;
  readonly maxBatch: number;
  readonly maxContext: number;
  readonly hostPool: string;
  readonly ssdPool: string;
  readonly heartbeatMs: number;
}

/**
 * A multi-round benchmark's results file (bench multiround, or multiround-engine on the reference
 * engine), as parsed JSON: what the validation reads of it.
 */
export interface LiveRun {
  readonly run?: { readonly date?: string };
  readonly env: { readonly users: number };
  readonly passes: ReadonlyArray<Readonly<Record<string, LivePassFigures | undefined>>>;
  readonly cluster?: Partial<LiveCluster> & { readonly systems?: Readonly<Record<string, LiveSystemDescription>> };
  readonly policies?: Readonly<Record<string, LiveSummary>>;
  readonly extras?: Readonly<Record<string, LiveSummary>>;
  readonly variants?: Readonly<Record<string, LiveSummary>>;
  readonly workload?: { readonly options?: object; readonly users_start_over_s?: number };
  readonly kv_bytes?: {
    readonly scheduler_costs_ms_per_chunk?: { readonly host: number; readonly ssd: number; readonly peer_network: number };
    readonly layers?: number;
    readonly bytes_per_token?: number;
  };
  readonly cost_model?: {
    readonly pcie_restore_chunk_us?: number;
    readonly scheduler?: { readonly conductor_threshold_pct?: { readonly pct?: number } };
  };
  /** A run on the reference engine: its compute port, fitted on its calibration seed's steps. */
  readonly engine_fit?: {
    readonly seed: number;
    readonly cost: SimCostModel;
    readonly peer?: LivePeerPulls;
    /** The calibration pass's own figures (bench multiround-engine): what its request path cost outside the nodes. */
    readonly calibration_run?: { readonly time_on_node?: { readonly outside_nodes_mean_ms?: number | null } };
  };
}

/** The calibration file (bench/results/twin-calibration.json), as far as the twin's cost ports read it. */
export interface CalibrationFile {
  readonly run?: { readonly date?: string };
  readonly overheads: {
    readonly nats_ms: readonly number[];
    readonly timer_lag_ms: readonly number[];
    readonly loop_turn_ms: readonly number[];
    readonly client_ms_per_ktoken: number;
    readonly schedule_ms: number;
    readonly admit_ms_per_ktoken: number;
    readonly export_ms_per_chunk: number;
    readonly prefill_cpu_ms?: number;
    readonly prefill_cpu_ms_per_ktoken?: number;
    readonly decode_cpu_ms?: number;
    readonly decode_cpu_ms_per_seq?: number;
    readonly node_prefill_path_ms?: number;
    readonly node_prefill_path_ms_per_ktoken?: number;
    readonly node_decode_path_ms?: number;
    readonly request_path_ms?: readonly number[];
  };
  readonly links: Readonly<
    Record<'host_load' | 'peer' | 'ssd_read' | 'host_write' | 'ssd_write', { readonly dispatch_ms: number; readonly bytes_per_ms?: number }>
  >;
}
