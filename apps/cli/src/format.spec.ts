// The plain-text pages of `mnemo status`, `mnemo why` and the line after each chat answer, from
// gateway answers of the shapes gateway.types.ts names.
import { statusText, table, turnLine, whyText } from './format.js';
import type { ClusterNode, ClusterStatus, RequestKv } from './gateway.types.js';

const node = (id: string, over: Partial<ClusterNode> = {}): ClusterNode => ({
  node_id: id,
  models: ['mnemo-tiny'],
  running: 1,
  waiting: 0,
  kv_usage: 0.25,
  chunks: { device: 3, host: 2, ssd: 1 },
  ssd_backend: 'io_uring',
  routed_prompt_tokens: 512,
  routed_hit_rate: { device: 0.5, host: null, ssd: 0 },
  ...over,
});

describe('mnemo CLI text', () => {
  it('table pads each column to its widest cell and trims line ends', () => {
    expect(
      table([
        ['a', 'bb', 'c'],
        ['ccc', 1, ''],
      ]),
    ).toBe('a    bb  c\nccc  1');
  });

  it.each<[string, ClusterNode, RegExp, boolean]>([
    ['io_uring node', node('n1'), /n1\s+1\s+1\s+0\s+25%\s+3\s+2\s+1\s+io_uring\s+512\s+50%\s+-\s+0%/, false],
    ['pread fallback', node('n2', { ssd_backend: 'pread' }), /n2 .* pread /, true],
    ['no SSD pool', node('n3', { ssd_backend: null }), /n3\s+1\s+1\s+0\s+25%\s+3\s+2\s+1\s+-\s+512/, false],
  ])('status: %s', (_name, n, row, warns) => {
    const cluster: ClusterStatus = { policy: 'symphony', directory_holdings: 7, nodes: [n] };
    const text = statusText(cluster, { data: [{ id: 'mnemo-tiny' }, { id: 'fortune-base' }] });
    expect(text).toContain('policy symphony · 1 node(s) · 7 (chunk, node) pairs in the KV directory');
    expect(text).toContain('models: mnemo-tiny, fortune-base');
    expect(text).toMatch(row);
    expect(text.includes(`WARNING: ${n.node_id}: SSD pools on the pread/pwrite fallback`)).toBe(warns);
  });

  it('status without models says so', () => {
    expect(statusText({ policy: 'lru', directory_holdings: 0, nodes: [] }, null)).toContain('models: -');
  });

  const kv: RequestKv = {
    request_id: 'r-1',
    model: 'mnemo-tiny',
    node_id: 'n1',
    policy: 'symphony',
    attempt: 1,
    scheduled_at: '2026-01-01T00:00:00.000Z',
    prompt_tokens: 300,
    cached_tokens: 256,
    tokens_by_source: { device: 256, host: 0, computed: 44 },
    node_record: true,
    chunks: [
      { index: 0, start: 0, tokens: 256, source: 'device', detail: 'device prefix cache hit' },
      { index: 1, start: 256, tokens: 44, source: 'computed', reason: 'partial', detail: 'a chunk is 256 tokens' },
    ],
  };

  it('why: a head line per request, then a row per chunk with its source and reason', () => {
    const text = whyText(kv);
    expect(text).toContain('request r-1 · mnemo-tiny on n1 (policy symphony, attempt 1) at 2026-01-01T00:00:00.000Z');
    expect(text).toContain('prompt 300 tokens, cached 256: device 256, computed 44\n');
    expect(text).toMatch(/0\s+0\+256\s+device\s+device prefix cache hit/);
    expect(text).toMatch(/1\s+256\+44\s+computed\s+partial: a chunk is 256 tokens/);
    expect(whyText({ ...kv, node_record: false })).toContain('(the node no longer has its record)');
  });

  it('why: the route, with every candidate’s estimate and the chosen one marked', () => {
    const text = whyText({
      ...kv,
      route: {
        reason: 'moved_queue',
        estimate_ms: 12.5,
        candidates: [
          { node_id: 'n0', queue_ms: 80, kv_ms: 0, total_ms: 80 },
          { node_id: 'n1', queue_ms: 0, kv_ms: 12.5, total_ms: 12.5 },
        ],
      },
    });
    expect(text).toContain('routed: moved_queue, estimated 12.5 ms to first token on n1');
    expect(text).toMatch(/n0\s+80\.0\s+0\.0\s+80\.0\n/);
    expect(text).toMatch(/n1\s+0\.0\s+12\.5\s+12\.5\s+chosen/);
    expect(whyText({ ...kv, route: { reason: '', estimate_ms: 0, candidates: [] } })).not.toContain('routed:');
  });

  it.each<[string, Parameters<typeof turnLine>[0], RequestKv | null, string]>([
    [
      'usage and sources',
      { ttftMs: 12.4, usage: { prompt_tokens: 300, prompt_tokens_details: { cached_tokens: 256 } } },
      kv,
      '[TTFT 12 ms · cached 256/300 tokens: device 256]',
    ],
    ['no record', { ttftMs: 3, usage: { prompt_tokens: 10 } }, null, '[TTFT 3 ms · cached 0/10 tokens: sources unknown]'],
    ['no usage: from the record', {}, kv, '[TTFT - · cached 256/300 tokens: device 256]'],
    [
      'nothing cached',
      { ttftMs: 5 },
      { ...kv, cached_tokens: 0, tokens_by_source: { device: 0, computed: 300 } },
      '[TTFT 5 ms · cached 0/300 tokens]',
    ],
  ])('turn line: %s', (_name, turn, record, line) => {
    expect(turnLine(turn, record)).toBe(line);
  });
});
