// The Mnemo dashboard: what an operator watches, one row per question. Every query reads
// metrics the services export on their ops port (METRICS_PORT, /metrics); the integration spec
// test/integration/dashboard-metrics.integration-spec.ts runs a cluster and fails if a metric
// named here is not exported or has no samples.
import { layout, q, quantile, quantiles, rate, row, stat, timeseries, type Panel, type PanelDraft } from './panels.js';

export const DASHBOARD_UID = 'mnemo-overview';

const GW = 'service="gateway"';
/** Prompt tokens a node prefilled or found cached (the denominator of every hit rate). */
const PROMPT_TOKENS = `(sum(${rate('mnemo_node_prompt_tokens_cached_total')}) + sum(${rate('mnemo_node_prompt_tokens_computed_total')}))`;
const share = (numerator: string): string => `${numerator} / scalar(${PROMPT_TOKENS})`;

function panels(): PanelDraft[] {
  return [
    row('Latency'),
    timeseries(
      'Time to first token (gateway)',
      'From the request reaching the gateway to its first streamed token: what a client sees.',
      quantiles('mnemo_time_to_first_token_seconds', GW),
      { unit: 's' },
    ),
    timeseries(
      'Time per output token (gateway)',
      'Mean gap between output tokens after the first, per request.',
      quantiles('mnemo_time_per_output_token_seconds', GW),
      { unit: 's' },
    ),
    timeseries(
      'Requests by outcome (gateway)',
      'Requests per second by operation and outcome (ok, or the error code).',
      [q(`sum by (operation, outcome) (${rate('mnemo_requests_total', GW)})`, '{{operation}} {{outcome}}')],
      { unit: 'reqps' },
    ),

    row('Queueing'),
    timeseries(
      'Node queue wait',
      "Time from admission on a node to the request's first prefill (mnemo_node_queue_seconds).",
      quantiles('mnemo_node_queue_seconds'),
      { unit: 's' },
    ),
    timeseries(
      'Sequences per state',
      'Waiting for admission to the batch, running (prefill or decode), paused by a slow client.',
      [
        q('sum(mnemo_node_waiting_sequences)', 'waiting'),
        q('sum(mnemo_node_running_sequences)', 'running'),
        q('sum(mnemo_node_paused_sequences)', 'paused'),
      ],
      { unit: 'short' },
    ),
    timeseries(
      'Dispatches and device KV use',
      "Scheduler dispatches by outcome (admitted, refused, unreachable), and each node's device KV use (0–1).",
      [
        q(`sum by (outcome) (${rate('mnemo_scheduler_dispatches_total')})`, 'dispatch {{outcome}}'),
        q('max by (instance) (mnemo_node_kv_usage_ratio)', 'KV use {{instance}}'),
      ],
    ),
    timeseries(
      'Route reasons',
      'Why the scheduler chose each node: reservation and session_home (the session stayed), moved_queue and moved_kv ' +
        "(it left its node for that node's queue, or for KV held elsewhere), cheapest (no home), and the baselines' reasons. " +
        '`mnemo why <id>` shows one request’s candidates and their estimates.',
      [q(`sum by (policy, reason) (${rate('mnemo_scheduler_route_reason_total')})`, '{{policy}} {{reason}}')],
      { unit: 'ops', width: 24 },
    ),

    row('KV tiers'),
    timeseries(
      'Prompt tokens served from cache, by tier',
      'Share of prompt tokens not computed: all cached (device prefix cache and every tier), ' +
        'restored from the host and SSD pools, fetched from a peer, reused across models (DroidSpeak).',
      [
        q(share(`sum(${rate('mnemo_node_prompt_tokens_cached_total')})`), 'cached (all)'),
        q(share(`sum by (tier) (${rate('mnemo_kv_hit_tokens_total')})`), '{{tier}}'),
        q(share(`sum(${rate('mnemo_kv_peer_restored_tokens_total')})`), 'peer'),
        q(share(`sum(${rate('mnemo_node_droidspeak_reused_tokens_total')})`), 'DroidSpeak'),
      ],
      { unit: 'percentunit', min: 0, max: 1 },
    ),
    timeseries(
      'Tier use',
      'Bytes used and capacity of each offload tier, over all nodes.',
      [q('sum by (tier, state) (mnemo_kv_tier_bytes)', '{{tier}} {{state}}')],
      { unit: 'bytes' },
    ),
    timeseries(
      'Tier evictions',
      'Segments (one layer of one chunk) evicted from each offload tier.',
      [q(`sum by (tier) (${rate('mnemo_kv_evicted_segments_total')})`, '{{tier}}')],
      { unit: 'ops' },
    ),

    row('Bytes moved'),
    timeseries(
      'Bytes moved per tier',
      'Written to and read back from each offload tier, and copied by swaps between device and host.',
      [
        q(`sum by (tier) (${rate('mnemo_kv_written_bytes_total')})`, 'write {{tier}}'),
        q(`sum by (tier) (${rate('mnemo_kv_read_bytes_total')})`, 'read {{tier}}'),
        q(`sum by (direction) (${rate('mnemo_node_swap_bytes_total')})`, 'swap {{direction}}'),
      ],
      { unit: 'Bps', width: 12 },
    ),
    timeseries(
      'Bytes moved per peer link',
      'Verified KV bytes each node pulled from each peer (peer → node), what nodes served, and what advisories prefetched.',
      [
        q(`sum by (peer, instance) (${rate('mnemo_kv_peer_link_bytes_total')})`, '{{peer}} → {{instance}}'),
        q(`sum by (instance) (${rate('mnemo_kv_peer_served_bytes_total')})`, 'served by {{instance}}'),
        q(`sum(${rate('mnemo_kv_prefetch_bytes_total')})`, 'prefetched'),
      ],
      { unit: 'Bps', width: 12 },
    ),

    row('Blocked I/O'),
    timeseries(
      'Blocked I/O per restoring prefill',
      'Time the engine waited on layer loads after its compute ran out.',
      [0.5, 0.99].map((p) => q(quantile(p, 'mnemo_kv_blocked_io_seconds'), `p${p * 100}`)),
      { unit: 's' },
    ),
    timeseries(
      'Time blocked, per second',
      "Seconds per second spent waiting: on peers' layers during prefill, the iteration " +
        'loop on swap copies, and layer-stream compute on layers not yet resident.',
      [
        q(`sum(${rate('mnemo_kv_peer_blocked_seconds_total')})`, 'peer restores'),
        q(`sum(${rate('mnemo_node_swap_wait_seconds_total')})`, 'swap copies'),
        q(`sum(${rate('mnemo_kv_stream_stall_seconds_total')})`, 'layer stream stalls'),
      ],
      { unit: 's' },
    ),
    timeseries(
      'Restores',
      'Prefills that restored a prefix from the tiers or from a peer, those that failed and were recomputed, and ' +
        'why peer restores failed: stale (the peer no longer held a chunk), unreachable (a chunk it did not give), ' +
        "pass (the prefill's own failure).",
      [
        q(`sum(${rate('mnemo_kv_restores_total')})`, 'tiers'),
        q(`sum(${rate('mnemo_kv_peer_restores_total')})`, 'peers'),
        q(`sum(${rate('mnemo_kv_restore_failures_total')}) + sum(${rate('mnemo_kv_peer_restore_failures_total')})`, 'failed'),
        q(`sum by (reason) (${rate('mnemo_kv_peer_restore_failures_by_reason_total')})`, 'peer failed: {{reason}}'),
      ],
      { unit: 'ops' },
    ),

    row('Advisories'),
    timeseries(
      'Advisory outcomes',
      'hit: the request found the KV its advisory pulled; missed: it came but the KV was not there (or it ' +
        'ran elsewhere); spurious: no request came before the advisory expired (kv-core advisory.outcome).',
      [q(`sum by (outcome) (${rate('mnemo_advisory_outcomes_total')})`, '{{outcome}}')],
      { unit: 'ops', stack: true },
    ),
    stat(
      'Advisory hit ratio',
      'Hits over every judged advisory in the time range.',
      q(
        'sum(increase(mnemo_advisory_outcomes_total{outcome="hit"}[$__range])) / sum(increase(mnemo_advisory_outcomes_total[$__range]))',
        'hit ratio',
      ),
      { unit: 'percentunit' },
    ),
    timeseries(
      'Advisories taken',
      'Advisories by outcome at the scheduler (reserved, or the error code), those ' +
        'the gateway refused with 429 (tenant over its rate), and live reservations.',
      [
        q(`sum by (outcome) (${rate('mnemo_scheduler_advisories_total')})`, '{{outcome}}'),
        q(`sum(${rate('mnemo_gateway_advisories_rate_limited_total')})`, 'rate-limited (429)'),
        q('sum(mnemo_scheduler_reservations)', 'live reservations'),
      ],
      { width: 12 },
    ),

    row('Failovers'),
    timeseries(
      'Failovers by outcome',
      'Requests whose node went down, by outcome at the gateway: continued on another ' +
        'node (token-exactly), completed, exhausted (GATEWAY_FAILOVER_RETRIES) or failed.',
      [q(`sum by (outcome) (${rate('mnemo_gateway_failovers_total')})`, '{{outcome}}')],
      { unit: 'ops', width: 6 },
    ),
    timeseries(
      'Failover gap',
      'Silence a failed-over client saw: its last token before the node died to the first of the continuation.',
      quantiles('mnemo_gateway_failover_gap_seconds'),
      { unit: 's', width: 6 },
    ),
    timeseries(
      'Nodes dropped',
      'Nodes the scheduler removed, by reason (timeout, left, unreachable); requests on them fail over.',
      [q(`sum by (reason) (${rate('mnemo_scheduler_nodes_dropped_total')})`, '{{reason}}')],
      { unit: 'ops', width: 6 },
    ),
    timeseries(
      'Live nodes',
      'Nodes with a recent heartbeat, as each scheduler replica counts them.',
      [q('max(mnemo_scheduler_live_nodes)', 'live nodes')],
      { width: 6 },
    ),

    row('Preemptions and swaps'),
    timeseries(
      'Preemptions and swaps',
      'Running sequences preempted, and sequences swapped between device and host KV memory by direction.',
      [
        q(`sum(${rate('mnemo_node_preemptions_total')})`, 'preemptions'),
        q(`sum by (direction) (${rate('mnemo_node_swaps_total')})`, 'swap {{direction}}'),
      ],
      { unit: 'ops', width: 12 },
    ),
    timeseries(
      'Swap copies held',
      'Host pool chunks kept pinned as the host copy of swapped-out sequences.',
      [q('sum(mnemo_kv_swap_held_chunks)', 'held chunks')],
      { width: 12 },
    ),

    row('Elastic KV'),
    timeseries(
      'Elastic units by state',
      "Each model's device KV in elastic units: lent to the model borrowing (the master), borrowed from the others.",
      [q('sum by (model, state) (mnemo_kv_elastic_units{state=~"lent|borrowed"})', '{{model}} {{state}}')],
      { width: 12 },
    ),
    timeseries(
      'Elastic resizes',
      "Grow and shrink operations of each model's elastic cache.",
      [q(`sum by (model) (${rate('mnemo_kv_elastic_resize_events_total')})`, '{{model}}')],
      { unit: 'ops', width: 12 },
    ),

    row('DroidSpeak'),
    timeseries(
      'Cross-model plans',
      'Derived-model prefills whose prefix the base model held, by outcome: ' +
        'reused (a plan was used), no_plan, plan_unavailable, no_base_kv, failed.',
      [q(`sum by (outcome) (${rate('mnemo_node_droidspeak_reuse_total')})`, '{{outcome}}')],
      { unit: 'ops', width: 12 },
    ),
    timeseries(
      'Tokens reused across models',
      "Prompt tokens prefilled over a base model's KV (partial prefill).",
      [q(`sum(${rate('mnemo_node_droidspeak_reused_tokens_total')})`, 'reused tokens')],
      { width: 12 },
    ),
  ];
}

/** The whole dashboard, ready for Grafana's import (or file provisioning). */
export interface GrafanaDashboard {
  readonly uid: string;
  readonly title: string;
  readonly schemaVersion: number;
  readonly templating: { list: Array<{ name: string; type: string; query: string; readonly [k: string]: unknown }> };
  readonly panels: Panel[];
  readonly [k: string]: unknown;
}

export function dashboard(): GrafanaDashboard {
  return {
    uid: DASHBOARD_UID,
    title: 'Mnemo',
    description: 'Mnemo serving: latency, queueing, KV tiers and transfers, advisories, failovers, preemption, elastic KV, DroidSpeak.',
    tags: ['mnemo'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    timepicker: {},
    timezone: 'browser',
    fiscalYearStartMonth: 0,
    liveNow: false,
    links: [],
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Prometheus',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
          refresh: 1,
          regex: '',
          options: [],
          includeAll: false,
          multi: false,
        },
      ],
    },
    panels: layout(panels()),
  };
}

/** Every metric series the dashboard's queries read (with the PromQL tokenizer). */
export function dashboardQueries(): Array<{ panel: string; expr: string }> {
  return dashboard().panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}
