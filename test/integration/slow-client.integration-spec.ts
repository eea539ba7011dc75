// Hardening issue, defect 3: backpressure from a slow SSE client to the node, over real TCP and
// NATS. The client is a raw HTTP/1.1 socket that stops reading after the response headers. The
// kernel absorbs a few MiB of a stalled loopback socket before the gateway's writes block (about
// 15k tokens of SSE here), so the node serves a long context (NODE_SIM_MAX_CONTEXT) at zero decode
// cost to get past that quickly.
import { connect, type Socket } from 'node:net';
import { Cluster, scrape, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const MAX_TOKENS = 30_000;
const BUFFER_EVENTS = 1024;
const STALL_MS = 8000;

/** An HTTP client that reads only when told to. */
class SlowClient {
  readonly socket: Socket;
  private readonly chunks: Buffer[] = [];
  readonly closed: Promise<void>;

  constructor(port: number, body: object) {
    const json = JSON.stringify(body);
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (c: Buffer) => this.chunks.push(c));
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
    this.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  }

  /** Waits for the response headers, then stops reading: the socket's buffers fill and stay full. */
  async stopReadingAfterHeaders(): Promise<string> {
    await waitFor(() => Buffer.concat(this.chunks).includes('\r\n\r\n'), 10_000, 'response headers');
    this.socket.pause();
    const text = Buffer.concat(this.chunks).toString('utf8');
    return text.slice(0, text.indexOf('\r\n\r\n'));
  }

  /** Reads until the server closes, and returns the body with its chunked framing removed. */
  async readToEnd(): Promise<string> {
    this.socket.resume();
    await this.closed;
    const raw = Buffer.concat(this.chunks);
    let at = raw.indexOf('\r\n\r\n') + 4;
    const body: Buffer[] = [];
    for (;;) {
      const eol = raw.indexOf('\r\n', at);
      if (eol < 0) break;
      const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
      if (!(size > 0)) break;
      body.push(raw.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    return Buffer.concat(body).toString('utf8');
  }
}

describe('a client that stops reading its stream', () => {
  let cluster: Cluster;
  let gatewayPort: number;
  let nodePort: number;

  const body = { model: MODEL, stream: true, max_tokens: MAX_TOKENS, seed: 3, messages: [{ role: 'user', content: 'talk' }] };
  const nodeMetric = (sample: string) => scrape(nodePort, sample);
  const gatewayMetric = (sample: string) => scrape(cluster.gateway!.metricsPort, sample);

  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 1,
      gateway: true,
      nodeEnv: {
        NODE_MODELS: MODEL,
        NODE_SIM_DECODE_STEP_MS: '0',
        NODE_SIM_PREFILL_TOKEN_US: '0',
        NODE_SIM_DECODE_SEQ_US: '0',
        NODE_SIM_DECODE_KCONTEXT_US: '0',
        NODE_SIM_MAX_CONTEXT: String(MAX_TOKENS + 1024),
        // The modelled device cache must hold the whole context, or admission refuses the request.
        NODE_KV_BLOCKS: String(Math.ceil((MAX_TOKENS + 1024) / 16)),
      },
      gatewayEnv: {
        GATEWAY_STREAM_BUFFER_EVENTS: String(BUFFER_EVENTS),
        GATEWAY_STALL_TIMEOUT_MS: String(STALL_MS),
        GATEWAY_IDLE_TIMEOUT_MS: '60000',
      },
      // The in-process node streams at zero cost on the test's own event loop, which can hold its
      // heartbeats past the 1 s test timeout on a loaded machine: that would read as a death and
      // move the stream (failover), which is not what this spec is about.
      schedulerEnv: { SCHEDULER_NODE_TIMEOUT_MS: '15000' },
    });
    gatewayPort = cluster.gateway!.httpPort;
    nodePort = cluster.nodes[0]!.metricsPort;
    await waitFor(
      async () =>
        ((await (await fetch(`http://127.0.0.1:${gatewayPort}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.length > 0,
      5000,
      'the model at the gateway',
    );
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('pauses the node with the gateway buffer bounded, and resumes it when the client reads again', async () => {
    const pausesBefore = (await nodeMetric('mnemo_node_flow_control_total{action="pause"}')) ?? 0;
    const client = new SlowClient(gatewayPort, body);
    expect(await client.stopReadingAfterHeaders()).toMatch(/^HTTP\/1\.1 200/);

    await waitFor(async () => (await nodeMetric('mnemo_node_paused_sequences')) === 1, 60_000, 'the node to pause the request', 500);
    expect(await nodeMetric('mnemo_node_flow_control_total{action="pause"}')).toBeGreaterThan(pausesBefore);
    // Paused means paused: the node generates nothing more, and the gateway holds at most one buffer.
    const generated = await nodeMetric('mnemo_node_generated_tokens_total');
    await new Promise((r) => setTimeout(r, 500));
    expect(await nodeMetric('mnemo_node_generated_tokens_total')).toBe(generated);
    expect(generated).toBeLessThan(MAX_TOKENS);
    expect(await gatewayMetric('mnemo_gateway_buffered_events')).toBeLessThanOrEqual(BUFFER_EVENTS);

    const text = await client.readToEnd();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"error"');
    expect(text).toContain(`"completion_tokens":${MAX_TOKENS}`);
    expect(await nodeMetric('mnemo_node_flow_control_total{action="resume"}')).toBeGreaterThan(0);
    expect(await gatewayMetric('mnemo_gateway_buffered_events')).toBe(0);
    // 30k tokens through a stalled then drained socket: about a minute idle, over two on a loaded machine.
  }, 240_000);

  it('gives a client up that stays stalled: the node is cancelled and the connection cut', async () => {
    const cancelledBefore = (await nodeMetric('mnemo_node_cancelled_total{reason="client"}')) ?? 0;
    const client = new SlowClient(gatewayPort, body);
    await client.stopReadingAfterHeaders();
    await waitFor(async () => (await nodeMetric('mnemo_node_paused_sequences')) === 1, 60_000, 'the node to pause the request', 500);
    const pausedAt = Date.now();
    await waitFor(
      async () => (await nodeMetric('mnemo_node_cancelled_total{reason="client"}')) === cancelledBefore + 1,
      STALL_MS + 5000,
      'the cancel on the node',
      500,
    );
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(STALL_MS - 500);
    expect(await nodeMetric('mnemo_node_running_sequences')).toBe(0);
    expect(await gatewayMetric('mnemo_gateway_buffered_events')).toBe(0);
    // Reading again finds the stream cut short: no [DONE], no usage.
    const text = await client.readToEnd();
    expect(text).not.toContain('[DONE]');
    expect(text).not.toContain('completion_tokens');
  }, 120_000);
});
