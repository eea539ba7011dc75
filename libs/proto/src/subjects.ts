/**
 * NATS subjects of the control plane — the internal contract, documented here next to the names.
 * Every payload is binary protobuf (messages of nats.proto, encoded with `encodeMessage`); a reply
 * is the listed message, never JSON. All subjects are versioned under `mnemo.v1.`.
 *
 * | subject | pattern | payload → reply | who |
 * |---|---|---|---|
 * | `SCHEDULE` | request, queue group `scheduler` | InferenceRequest → ScheduleReply | gateway → scheduler |
 * | `MODELS_LIST` | request, queue group `scheduler` | ListModelsRequest → ListModelsReply | gateway → scheduler |
 * | `ADVISE` | request, queue group `scheduler` | AdvisoryRequest → AdvisoryReply | gateway → scheduler |
 * | `INVALIDATE` | request, queue group `scheduler` | InvalidateAdvisoryRequest → InvalidateAdvisoryReply | gateway → scheduler |
 * | `SESSION_GET` | request, queue group `scheduler` | SessionRequest → SessionReply | gateway → scheduler |
 * | `SESSION_DELETE` | request, queue group `scheduler` | SessionRequest → SessionDeleteReply | gateway → scheduler |
 * | `HEARTBEAT` | publish (every replica subscribes) | Heartbeat | node → schedulers |
 * | `NODE_DOWN` | publish (every gateway subscribes; every scheduler replica publishes) | NodeDown | scheduler → gateways |
 * | `KV_EVENTS` | publish (every replica subscribes) | KvEvent (kv.proto) | node → schedulers |
 * | `KV_REPORT` | publish (every node subscribes) | KvReportRequest → a full KvEvent on KV_EVENTS | scheduler → nodes |
 * | `Subjects.nodePrefetch(id)` | request | PrefetchRequest → PrefetchReply (or ErrorReply) | scheduler → node |
 * | `Subjects.nodeForget(id)` | request | ForgetRequest → ForgetReply | scheduler → node |
 * | `nodeInfer(id)` | request | InferenceRequest (with `attempt`) → ScheduleReply (admitted / error) | scheduler → node |
 * | `nodeCancel(id)` | publish | CancelRequest (attempt, silent) | gateway, scheduler → node |
 * | `nodeFlow(id)` | publish | FlowControl (pause / resume one request) | gateway → node |
 * | `InferenceRequest.reply_subject` | publish | TokenEvent (seq-ordered per attempt, last has done) | node → gateway inbox |
 * | `nodePrefetch(id)` | request | PrefetchRequest → PrefetchReply or ErrorReply (decodeReplyOrError) | scheduler → node |
 * | `nodeForget(id)` | request | ForgetRequest → ForgetReply or ErrorReply (decodeReplyOrError) | scheduler → node |
 * | `tokenizer(sha256)` | request, queue group `tokenizers` | TokenizerChunkRequest → TokenizerChunkReply | gateway → a node with it |
 * | `PROFILER_*` | request, queue group `profiler` | Register…/List…Request → ProfilerReply | any → profiler |
 * | `PROFILER_PLAN` | request, queue group `profiler` | PlanRequest → PlanReply (profiler.proto) | node → profiler |
 * | `PROFILER_FRONTIER_UPDATED` | publish (every node subscribes) | FrontierUpdated | profiler → nodes |
 */
export const Subjects = {
  /** Schedule one inference. The scheduler picks a node, dispatches, and replies with the node id or an error. */
  SCHEDULE: 'mnemo.v1.scheduler.schedule',
  /** Models some live node serves (the gateway's GET /v1/models). */
  MODELS_LIST: 'mnemo.v1.scheduler.models.list',
  /** Reserve a node for a session's coming request and prefetch its KV there (Symphony advisory). */
  ADVISE: 'mnemo.v1.scheduler.advise',
  /** Drop an advisory reservation. */
  INVALIDATE: 'mnemo.v1.scheduler.invalidate',
  /** What the scheduler knows of a session. */
  SESSION_GET: 'mnemo.v1.scheduler.sessions.get',
  /** Forget a session everywhere (reservation, routing state, nodes' data). */
  SESSION_DELETE: 'mnemo.v1.scheduler.sessions.delete',
  /** Node liveness and load, published every NODE_HEARTBEAT_MS. Plain subscription: every scheduler replica keeps the full registry. */
  HEARTBEAT: 'mnemo.v1.nodes.heartbeat',
  /**
   * A node incarnation is gone (timeout, restart, no responder): gateways move its requests elsewhere. Repeats are normal (one per
   * scheduler replica).
   */
  NODE_DOWN: 'mnemo.v1.nodes.down',
  /** What a node holds, per tier, as it changes (stored, evicted, moved between tiers): KvEvent, batched per node. */
  KV_EVENTS: 'mnemo.v1.nodes.kv-events',
  /** Ask nodes for a full KV report (a KvEvent with full = true on KV_EVENTS): scheduler start-up, or a seq gap. */
  KV_REPORT: 'mnemo.v1.nodes.kv-report',
  /**
   * Why a request's KV came from where it did: WhyRequest → WhyReply, queue group `scheduler`: every replica holds
   * every record (WHY_RECORD), so one replica answers, the same whichever; an unknown id is a prompt not_found.
   */
  WHY: 'mnemo.v1.scheduler.why',
  /** A routing record (JSON), from the replica that routed a request attempt to every replica: the newest attempt wins. */
  WHY_RECORD: 'mnemo.v1.scheduler.why-record',
  /** Nodes, their load and KV per tier, routed hit rates: ClusterStatusRequest → ClusterStatusReply (queue group `scheduler`). */
  STATUS: 'mnemo.v1.scheduler.status',
  /** Register (or re-register, idempotently) a model record: RegisterModelRequest → ProfilerReply.model. */
  PROFILER_MODELS_REGISTER: 'mnemo.v1.profiler.models.register',
  /** All model records: ListModelRecordsRequest → ProfilerReply.models. */
  PROFILER_MODELS_LIST: 'mnemo.v1.profiler.models.list',
  /** Register a base → derived pair: RegisterModelPairRequest → ProfilerReply.pair. */
  PROFILER_PAIRS_REGISTER: 'mnemo.v1.profiler.pairs.register',
  /** Pairs, optionally of one base: ListModelPairsRequest → ProfilerReply.pairs. */
  PROFILER_PAIRS_LIST: 'mnemo.v1.profiler.pairs.list',
  /** DroidSpeak plan for (base, derived) within a quality floor and latency budget: PlanRequest → PlanReply (profiler.proto). */
  PROFILER_PLAN: 'mnemo.v1.profiler.plan',
  /** A pair's new frontier was stored: FrontierUpdated, to every node's plan cache. */
  PROFILER_FRONTIER_UPDATED: 'mnemo.v1.profiler.frontier.updated',
  /** Advisory prefetch on one node: PrefetchRequest → PrefetchReply (or ErrorReply). */
  nodePrefetch: (nodeId: string): string => `mnemo.v1.node.${assertSubjectToken(nodeId)}.prefetch`,
  /** Invalidation on one node (prefetched data demoted): ForgetRequest → ForgetReply. */
  nodeForget: (nodeId: string): string => `mnemo.v1.node.${assertSubjectToken(nodeId)}.forget`,
} as const;

/** Queue groups: each request is handled by exactly one replica of the service. */
export const QueueGroups = {
  SCHEDULER: 'scheduler',
  PROFILER: 'profiler',
  TOKENIZERS: 'tokenizers',
} as const;

/** Inference dispatch to one node: InferenceRequest → ScheduleReply (node_id when admitted, or error). */
export function nodeInferSubject(nodeId: string): string {
  return `mnemo.v1.node.${assertSubjectToken(nodeId)}.infer`;
}

/** Cancel a request on the node running it: CancelRequest, fire-and-forget. */
export function nodeCancelSubject(nodeId: string): string {
  return `mnemo.v1.node.${assertSubjectToken(nodeId)}.cancel`;
}

/** A node's record of one request it ran: NodeWhyRequest → NodeKvRecord. */
export function nodeWhySubject(nodeId: string): string {
  return `mnemo.v1.node.${assertSubjectToken(nodeId)}.why`;
}

/** Backpressure for requests running on one node: FlowControl, fire-and-forget. */
export function nodeFlowSubject(nodeId: string): string {
  return `mnemo.v1.node.${assertSubjectToken(nodeId)}.flow`;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A tokenizer bundle, addressed by its content hash: every node holding those exact bytes
 * answers in one queue group, so the gateway needs no node id and can never get other bytes.
 */
export function tokenizerSubject(sha256: string): string {
  if (!SHA256_HEX.test(sha256)) throw new RangeError(`not a lowercase hex SHA-256: ${JSON.stringify(sha256)}`);
  return `mnemo.v1.tokenizers.${sha256}`;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** Node ids become one subject token: no dots, wildcards or whitespace. */
export function isSubjectToken(s: string): boolean {
  return TOKEN.test(s);
}

export function assertSubjectToken(s: string): string {
  if (!TOKEN.test(s)) throw new RangeError(`not a valid NATS subject token (want [A-Za-z0-9_-]+): ${JSON.stringify(s)}`);
  return s;
}

/** Maps any string (e.g. a hostname with dots) to a valid subject token. */
export function toSubjectToken(s: string): string {
  const t = s.replace(/[^A-Za-z0-9_-]/g, '-');
  return t.length > 0 ? t : '_';
}
