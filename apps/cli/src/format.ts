// Plain-text rendering of the gateway's answers (no colours: output is often piped).
import type { ChatTurn, ClusterNode, ClusterStatus, ModelList, RequestKv } from './gateway.types.js';

export function table(rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => String(c).padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const pct = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : `${(100 * x).toFixed(0)}%`);

/** `mnemo status`. */
export function statusText(cluster: ClusterStatus, models: ModelList | null): string {
  const rows: Array<Array<string | number>> = [
    ['node', 'models', 'running', 'waiting', 'kv used', 'device', 'host', 'ssd', 'ssd io', 'routed', 'hit device', 'hit host', 'hit ssd'],
  ];
  for (const n of cluster.nodes) {
    rows.push([
      n.node_id,
      n.models.length,
      n.running,
      n.waiting,
      pct(n.kv_usage),
      n.chunks.device,
      n.chunks.host,
      n.chunks.ssd,
      n.ssd_backend ?? '-',
      n.routed_prompt_tokens,
      pct(n.routed_hit_rate.device),
      pct(n.routed_hit_rate.host),
      pct(n.routed_hit_rate.ssd),
    ]);
  }
  const ids = (models?.data ?? []).map((m) => m.id).join(', ');
  return [
    `policy ${cluster.policy} · ${cluster.nodes.length} node(s) · ${cluster.directory_holdings} (chunk, node) pairs in the KV directory`,
    `models: ${ids || '-'}`,
    '',
    table(rows),
    '',
    "device/host/ssd: chunks held per tier; ssd io: the SSD pools' I/O backend (pread: the slow fallback, see docs/kv-store.md);",
    'hit: share of the prompt tokens routed to the node that it held there when routed.',
    ...fallbackNotes(cluster.nodes),
  ].join('\n');
}

/** A line for each node whose SSD pools run the pread/pwrite fallback. */
function fallbackNotes(nodes: readonly ClusterNode[]): string[] {
  const slow = nodes.filter((n) => (n.ssd_backend ?? '').includes('pread')).map((n) => n.node_id);
  return slow.length
    ? ['', `WARNING: ${slow.join(', ')}: SSD pools on the pread/pwrite fallback (install liburing-dev and rebuild the native addon)`]
    : [];
}

/** `mnemo why`. */
export function whyText(w: RequestKv): string {
  const by = w.tokens_by_source;
  const head = [
    `request ${w.request_id} · ${w.model} on ${w.node_id} (policy ${w.policy}, attempt ${w.attempt}) at ${w.scheduled_at}`,
    `prompt ${w.prompt_tokens} tokens, cached ${w.cached_tokens}: ${Object.entries(by)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}${w.node_record ? '' : ' (the node no longer has its record)'}`,
    '',
  ];
  const rows: Array<Array<string | number>> = [['chunk', 'tokens', 'source', 'why']];
  for (const c of w.chunks) rows.push([c.index, `${c.start}+${c.tokens}`, c.source, c.reason ? `${c.reason}: ${c.detail}` : c.detail]);
  return head.join('\n') + table(rows) + routeText(w);
}

/** Why routing chose the node: its reason, and each candidate's estimated time to first token (the chosen one marked). */
function routeText(w: RequestKv): string {
  const r = w.route;
  if (!r?.reason) return '';
  const lines = ['', '', `routed: ${r.reason}, estimated ${r.estimate_ms.toFixed(1)} ms to first token on ${w.node_id}`];
  if (r.admitted_at && r.first_token_at) lines.push(`on the node: admitted ${r.admitted_at}, first token ${r.first_token_at}`);
  if (r.candidates.length === 0) return lines.join('\n');
  const rows: Array<Array<string | number>> = [['node', 'queue ms', 'kv ms', 'total ms', '']];
  for (const c of r.candidates)
    rows.push([c.node_id, c.queue_ms.toFixed(1), c.kv_ms.toFixed(1), c.total_ms.toFixed(1), c.node_id === w.node_id ? 'chosen' : '']);
  return lines.join('\n') + '\n' + table(rows);
}

/** The line after each chat answer; `kv` null when the request's record is unknown. */
export function turnLine(turn: Pick<ChatTurn, 'ttftMs' | 'usage'>, kv: RequestKv | null): string {
  const ttft = turn.ttftMs === undefined ? '-' : `${turn.ttftMs.toFixed(0)} ms`;
  const prompt = turn.usage?.prompt_tokens ?? kv?.prompt_tokens ?? 0;
  const cached = turn.usage?.prompt_tokens_details?.cached_tokens ?? kv?.cached_tokens ?? 0;
  const by = kv
    ? Object.entries(kv.tokens_by_source)
        .filter(([k, v]) => v > 0 && k !== 'computed')
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
    : 'sources unknown';
  return `[TTFT ${ttft} · cached ${cached}/${prompt} tokens${by ? `: ${by}` : ''}]`;
}
