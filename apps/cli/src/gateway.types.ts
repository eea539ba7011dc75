// The gateway's JSON answers as the CLI reads them (the gateway's controllers own the shapes; these
// name only the fields the CLI uses, so a newer gateway that adds fields still works).

/** Share of routed prompt tokens a node held in a tier when routed; null before any were routed. */
export type HitRate = number | null;

/** One node of `GET /v1/cluster`. */
export interface ClusterNode {
  readonly node_id: string;
  readonly models: readonly string[];
  readonly running: number;
  readonly waiting: number;
  readonly kv_usage: number;
  readonly chunks: { readonly device: number; readonly host: number; readonly ssd: number };
  /** "io_uring", "pread" (the fallback), or null: no SSD pool (or a node too old to say). */
  readonly ssd_backend?: string | null;
  readonly routed_prompt_tokens: number;
  readonly routed_hit_rate: { readonly device: HitRate; readonly host: HitRate; readonly ssd: HitRate };
}

/** `GET /v1/cluster`. */
export interface ClusterStatus {
  readonly policy: string;
  readonly directory_holdings: number;
  readonly nodes: readonly ClusterNode[];
}

/** `GET /v1/models`. */
export interface ModelList {
  readonly data?: ReadonlyArray<{ readonly id: string }>;
}

/** One chunk of a request's prompt in `GET /v1/requests/{id}/kv`. */
export interface KvChunkView {
  readonly index: number;
  readonly start: number;
  readonly tokens: number;
  readonly source: string;
  readonly reason?: string;
  readonly detail: string;
}

/** `GET /v1/requests/{id}/kv`: where each chunk of a request's prompt came from. */
export interface RequestKv {
  readonly request_id: string;
  readonly model: string;
  readonly node_id: string;
  readonly policy: string;
  readonly attempt: number;
  readonly scheduled_at: string;
  readonly prompt_tokens: number;
  readonly cached_tokens: number;
  /** Prompt tokens by where their KV came from: device, host, ssd, peer, droidspeak, computed. */
  readonly tokens_by_source: Readonly<Record<string, number>>;
  readonly node_record: boolean;
  /** Why routing chose the node (absent from gateways older than the field). */
  readonly route?: RouteView;
  readonly chunks: readonly KvChunkView[];
}

/** Routing's reason, and each candidate's estimated time to first token, ms. */
export interface RouteView {
  readonly reason: string;
  readonly estimate_ms: number;
  readonly candidates: ReadonlyArray<{
    readonly node_id: string;
    readonly queue_ms: number;
    readonly kv_ms: number;
    readonly total_ms: number;
  }>;
  readonly admitted_at?: string;
  readonly first_token_at?: string;
}

/** `POST /v1/profiler/jobs` and `GET /v1/profiler/jobs/{id}`. */
export interface ProfilingJob {
  readonly id: string;
  readonly status: 'queued' | 'running' | 'done' | 'failed';
  readonly totalPatterns: number;
  readonly donePatterns: number;
  readonly error: string | null;
}

/** The usage block of a chat completion (the last streamed chunk, with `include_usage`). */
export interface ChatUsage {
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly prompt_tokens_details?: { readonly cached_tokens?: number };
}

/** One `data:` chunk of a streamed chat completion. */
export interface ChatCompletionChunk {
  readonly id?: string;
  readonly usage?: ChatUsage | null;
  readonly error?: { readonly message?: string };
  readonly choices?: ReadonlyArray<{ readonly finish_reason?: string | null; readonly delta?: { readonly content?: string | null } }>;
}

/** What a streamed chat turn left: its id, usage and the time to its first piece of text (ms, as the client saw it). */
export interface ChatTurn {
  id?: string;
  usage?: ChatUsage;
  ttftMs?: number;
  finishReason?: string;
}

/** The error body the gateway answers with (OpenAI's shape). */
export interface ErrorBody {
  readonly error?: { readonly message?: string };
}
