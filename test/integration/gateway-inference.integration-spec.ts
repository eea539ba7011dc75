// End to end through the front door: gateway → scheduler → node-manager (sim engine) → token
// inbox → client, over real NATS, with plain fetch, the official OpenAI SDK and gRPC.
import { credentials, Metadata, type Client } from '@grpc/grpc-js';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import OpenAI from 'openai';
import { CancelRequestSchema, FinishReason, Subjects, decodeMessage, loadGrpcServices, nodeCancelSubject } from '@mnemo/proto';
import { startGateway } from '../../apps/gateway/src/app.js';
import { gatewayCluster, natsUrl, type Cluster } from './cluster.js';

const KEY = 'sk-test-inference';
const MODEL = 'mnemo-tiny';

// Responses are checked field by field with expect(); a loose JSON type keeps that readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface SseResult {
  chunks: Array<Json>;
  done: boolean;
  headers: Headers;
}

/** Reads an SSE response to the end: the JSON chunks, and whether `[DONE]` closed it. */
async function readSse(res: Response): Promise<SseResult> {
  const text = await res.text();
  const events = text.split('\n\n').filter((e) => e.length > 0);
  const out: SseResult = { chunks: [], done: false, headers: res.headers };
  for (const e of events) {
    expect(e.startsWith('data: ')).toBe(true);
    const data = e.slice('data: '.length);
    if (data === '[DONE]') out.done = true;
    else out.chunks.push(JSON.parse(data));
  }
  return out;
}

describe('gateway inference (scheduler + sim node)', () => {
  const started = gatewayCluster({
    nodes: 1,
    nodeEnv: { NODE_MODELS: MODEL, NODE_SIM_DECODE_STEP_MS: '2' },
    gatewayEnv: { MNEMO_API_KEYS: KEY, GATEWAY_MAX_PROMPT_TOKENS: '512' },
  });
  let cluster: Cluster;
  let base: string;
  let nc: NatsConnection;
  let scheduled = 0;

  beforeAll(async () => {
    ({ cluster, base } = started);
    // A separate connection watches the schedule subject: rejected requests must never get there.
    nc = await connect({ servers: natsUrl() });
    nc.subscribe(Subjects.SCHEDULE, { callback: () => void scheduled++ });
    await nc.flush();
    // The scheduler learns the node from its heartbeats; wait until the gateway sees the model.
    for (let i = 0; i < 100; i++) {
      const list = (await (await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
        data: Array<{ id: string }>;
      };
      if (list.data.some((m) => m.id === MODEL)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    await nc?.close();
  });

  /** Collects the CancelRequests the node receives. */
  function watchCancels() {
    const seen: Array<{ requestId: string; reason: string }> = [];
    const waiters: Array<() => void> = [];
    const sub = nc.subscribe(nodeCancelSubject(cluster.nodes[0]!.nodeId), {
      callback: (_e, m) => {
        seen.push(decodeMessage(CancelRequestSchema, m.data));
        waiters.forEach((w) => w());
      },
    });
    return {
      seen,
      until: (pred: (c: typeof seen) => boolean) =>
        new Promise<void>((resolve, reject) => {
          if (pred(seen)) return resolve();
          const t = setTimeout(() => reject(new Error(`cancel not seen; got ${JSON.stringify(seen)}`)), 5000);
          waiters.push(() => {
            if (pred(seen)) {
              clearTimeout(t);
              resolve();
            }
          });
        }),
      close: () => sub.unsubscribe(),
    };
  }

  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...init,
    });
  const chatBody = (extra: object = {}) => ({
    model: MODEL,
    messages: [{ role: 'user', content: 'Hello there' }],
    max_tokens: 12,
    seed: 7,
    ...extra,
  });

  it('lists the model with its engine', async () => {
    const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(await res.json()).toEqual({
      object: 'list',
      data: [expect.objectContaining({ id: MODEL, object: 'model', owned_by: 'mnemo', engine: 'sim', max_context: expect.any(Number) })],
    });
  });

  it('answers a non-streamed chat completion in the OpenAI shape', async () => {
    const res = await post('/v1/chat/completions', chatBody());
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    expect(json).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: MODEL,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: expect.any(String), refusal: null },
          logprobs: null,
          finish_reason: expect.stringMatching(/^(stop|length)$/),
        },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
        prompt_tokens_details: { cached_tokens: expect.any(Number) },
      },
    });
    expect(json.usage.completion_tokens).toBeGreaterThan(0);
    expect(json.usage.completion_tokens).toBeLessThanOrEqual(12);
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens);
  });

  it('streams the same completion as SSE chunks, usage on the last one, then [DONE]', async () => {
    const whole = (await (await post('/v1/chat/completions', chatBody())).json()) as Json;
    const res = await post('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const sse = await readSse(res);
    expect(sse.done).toBe(true);
    const [first, ...rest] = sse.chunks;
    expect(first).toMatchObject({
      object: 'chat.completion.chunk',
      model: MODEL,
      choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }],
    });
    const last = rest.at(-1)!;
    expect(last.choices[0].finish_reason).toBe(whole.choices[0].finish_reason);
    expect(last.usage).toEqual(whole.usage);
    expect(new Set(sse.chunks.map((c) => c.id)).size).toBe(1);
    const text = sse.chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    // Same seed, same prompt: the same tokens, streamed or not.
    expect(text.length).toBeGreaterThan(0);
    expect(text).toBe(whole.choices[0].message.content);
  });

  it('streams legacy completions with text_completion chunks', async () => {
    const res = await post('/v1/completions', {
      model: MODEL,
      prompt: 'Once upon',
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const sse = await readSse(res);
    expect(sse.done).toBe(true);
    expect(sse.chunks.every((c) => c.object === 'text_completion')).toBe(true);
    // include_usage: the OpenAI layout, a final choices-less chunk with usage.
    expect(sse.chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 5 } });
    expect(sse.chunks.at(-2)!.choices[0].finish_reason).toBe('length');
  });

  it('works with the official OpenAI SDK, streamed and not', async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain(MODEL);

    const whole = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 6,
      seed: 3,
    });
    expect(whole.choices[0]!.message.role).toBe('assistant');
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 6,
      seed: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    // The same prompt again: its whole blocks now come from the node's prefix cache.
    const { prompt_tokens_details: cached, ...counts } = usage!;
    const { prompt_tokens_details: first, ...wholeCounts } = whole.usage!;
    expect(counts).toEqual(wholeCounts);
    expect(cached?.cached_tokens).toBe(Math.floor((wholeCounts.prompt_tokens - 1) / 16) * 16);
    expect(first?.cached_tokens).toBeLessThanOrEqual(cached?.cached_tokens ?? 0);

    const legacy = await client.completions.create({ model: MODEL, prompt: 'abc', max_tokens: 4 });
    expect(legacy.choices[0]!.finish_reason).toBe('length');
    expect(legacy.usage?.completion_tokens).toBe(4);

    await expect(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
  });

  it('streams gRPC Infer through the same pipeline', async () => {
    const Gateway = loadGrpcServices().clients.Gateway;
    const client = new Gateway(`127.0.0.1:${cluster.gateway!.grpcPort}`, credentials.createInsecure()) as unknown as Client & {
      Infer: (req: object, md: Metadata) => NodeJS.EventEmitter;
    };
    const md = new Metadata();
    md.set('authorization', `Bearer ${KEY}`);
    const chunks: Array<Json> = [];
    await new Promise<void>((resolve, reject) => {
      const call = client.Infer({ model: MODEL, messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 12, seed: 7 }, md);
      call.on('data', (c: Json) => chunks.push(c));
      call.on('error', reject);
      call.on('end', resolve);
    });
    client.close();
    const last = chunks.at(-1)!;
    expect(last.finishReason).not.toBe(FinishReason.UNSPECIFIED);
    expect(last.usage.completionTokens).toBeGreaterThan(0);
    const whole = (await (await post('/v1/chat/completions', chatBody())).json()) as Json;
    expect(chunks.map((c) => c.text).join('')).toBe(whole.choices[0].message.content);
    expect(chunks.flatMap((c) => c.tokenIds)).toHaveLength(last.usage.completionTokens);
  });

  const tooLong: Array<[string, string, unknown]> = [
    ['prompt over GATEWAY_MAX_PROMPT_TOKENS', '/v1/chat/completions', chatBody({ messages: [{ role: 'user', content: 'x'.repeat(600) }] })],
    ['prompt + max_tokens beyond the model context', '/v1/completions', { model: MODEL, prompt: 'hi', max_tokens: 1_000_000 }],
  ];
  it.each(tooLong)('rejects a %s with 400 context_length_exceeded and schedules nothing', async (_name, path, body) => {
    const before = scheduled;
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'context_length_exceeded' } });
    await nc.flush();
    expect(scheduled).toBe(before);
  });

  it('cancels the request on the node when the client disconnects mid-stream', async () => {
    const cancels = watchCancels();
    await nc.flush();
    const ac = new AbortController();
    const res = await post('/v1/chat/completions', chatBody({ max_tokens: 3000, stream: true }), { signal: ac.signal });
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const reader = res.body!.getReader();
    await reader.read(); // at least one chunk arrived: the node is generating
    ac.abort();
    await cancels.until((c) => c.some((x) => x.requestId === requestId && x.reason === 'client_disconnected'));
    cancels.close();
    const metrics = await (await fetch(`http://127.0.0.1:${cluster.gateway!.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/mnemo_requests_total\{[^}]*operation="chat.completions"[^}]*outcome="cancelled"[^}]*\} 1/);
  });

  it('ends at a stop string, drops what follows and stops the node', async () => {
    const whole = (await (await post('/v1/completions', { model: MODEL, prompt: 'Tell me', max_tokens: 40, seed: 11 })).json()) as Json;
    const full: string = whole.choices[0].text;
    expect(full.length).toBeGreaterThan(8);
    const stop = full.slice(6, 8);
    const expected = full.slice(0, full.indexOf(stop));
    const cancels = watchCancels();
    for (const stream of [false, true]) {
      const res = await post('/v1/completions', { model: MODEL, prompt: 'Tell me', max_tokens: 40, seed: 11, stop, stream });
      if (stream) {
        const sse = await readSse(res);
        expect(sse.chunks.map((c) => c.choices[0].text).join('')).toBe(expected);
        expect(sse.chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
      } else {
        const json = (await res.json()) as Json;
        expect(json.choices[0]).toMatchObject({ text: expected, finish_reason: 'stop' });
      }
    }
    await cancels.until((c) => c.filter((x) => x.reason === 'stop_sequence').length === 2);
    cancels.close();
  });

  it('turns a timeout after the stream started into an SSE error event, then [DONE], and cancels the node', async () => {
    const impatient = await startGateway({
      NATS_URL: natsUrl(),
      GATEWAY_PORT: '0',
      GATEWAY_GRPC_PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'error',
      GATEWAY_REQUEST_TIMEOUT_MS: '300',
    });
    const cancels = watchCancels();
    try {
      const url = `http://127.0.0.1:${impatient.httpPort}/v1/chat/completions`;
      const res = await fetch(url, { method: 'POST', body: JSON.stringify(chatBody({ max_tokens: 3000, stream: true })) });
      expect(res.status).toBe(200);
      const sse = await readSse(res);
      expect(sse.done).toBe(true);
      expect(sse.chunks.at(-1)).toEqual({ error: { message: expect.any(String), type: 'timeout_error', param: null, code: 'timeout' } });
      await cancels.until((c) => c.some((x) => x.requestId === sse.headers.get('x-request-id') && x.reason === 'timeout'));

      const whole = await fetch(url, { method: 'POST', body: JSON.stringify(chatBody({ max_tokens: 3000 })) });
      expect(whole.status).toBe(504);
      expect(await whole.json()).toMatchObject({ error: { code: 'timeout' } });
    } finally {
      cancels.close();
      await impatient.stop();
    }
  });

  it('cancels on the node when a gRPC caller cancels', async () => {
    const cancels = watchCancels();
    const Gateway = loadGrpcServices().clients.Gateway;
    const client = new Gateway(`127.0.0.1:${cluster.gateway!.grpcPort}`, credentials.createInsecure()) as unknown as Client & {
      Infer: (req: object, md: Metadata) => NodeJS.EventEmitter & { cancel(): void };
    };
    const md = new Metadata();
    md.set('authorization', `Bearer ${KEY}`);
    const call = client.Infer({ model: MODEL, prompt: 'go on', maxTokens: 3000 }, md);
    call.on('error', () => undefined); // CANCELLED, expected
    const id = await new Promise<string>((resolve) => call.once('data', (c: { id: string }) => resolve(c.id)));
    call.cancel();
    await cancels.until((c) => c.some((x) => x.requestId === id && x.reason === 'client_disconnected'));
    cancels.close();
    client.close();
  });

  it('refuses a wrong API key through the SDK as an AuthenticationError', async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('exports request, latency, TTFT and TPOT metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${cluster.gateway!.metricsPort}/metrics`)).text();
    expect(text).toMatch(/mnemo_requests_total\{[^}]*operation="chat.completions"[^}]*outcome="ok"[^}]*\} [1-9]/);
    expect(text).toMatch(/mnemo_requests_total\{[^}]*operation="grpc.infer"[^}]*outcome="ok"[^}]*\} 1/);
    expect(text).toMatch(/mnemo_time_to_first_token_seconds_count\{[^}]*model="mnemo-tiny"[^}]*\} [1-9]/);
    expect(text).toMatch(/mnemo_time_per_output_token_seconds_count\{[^}]*model="mnemo-tiny"[^}]*\} [1-9]/);
    expect(text).toMatch(/mnemo_request_duration_seconds_count\{[^}]*operation="completions"[^}]*\} [1-9]/);
  });
});
