// One request's OpenTelemetry spans form a single trace across the gateway, the scheduler and a
// node, and the context really rides the wire: the test reads `traceparent` off the NATS messages
// (SCHEDULE and the node's infer subject) and starts the trace itself in gRPC metadata. The three
// services share this process, so a shared in-process context would also "link" spans: the
// parent ids are checked against the headers each hop carried.
import { credentials, Metadata, type Client } from '@grpc/grpc-js';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { loadGrpcServices, nodeInferSubject, Subjects } from '@mnemo/proto';
import { addTestSpanProcessor, flushTracing } from '@mnemo/service-kit';
import { Cluster } from './cluster.js';

const exporter = new InMemorySpanExporter();
addTestSpanProcessor(new SimpleSpanProcessor({ exporter }));

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const serviceOf = (s: ReadableSpan) => s.resource.attributes['service.name'];

describe('tracing across services', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 1, gateway: true });
  });
  afterAll(async () => cluster?.stop());

  it(
    'a gRPC Infer call started in a client trace: spans of three services ' + 'in one trace, traceparent in NATS headers and gRPC metadata',
    async () => {
      const node = cluster.nodes[0]!;
      const seen: Record<string, string | undefined> = {};
      const spy = (subject: string) =>
        cluster.nc.subscribe(subject, {
          callback: (_e, m) => {
            seen[subject] ??= m.headers?.get('traceparent');
          },
        });
      const subs = [spy(Subjects.SCHEDULE), spy(nodeInferSubject(node.nodeId))];
      await cluster.nc.flush();

      const Gateway = loadGrpcServices().clients.Gateway;
      const client = new Gateway(`127.0.0.1:${cluster.gateway!.grpcPort}`, credentials.createInsecure()) as unknown as Client & {
        Infer: (req: object, md: Metadata) => NodeJS.EventEmitter;
      };
      const md = new Metadata();
      md.set('traceparent', `00-${TRACE_ID}-${CLIENT_SPAN}-01`);
      await new Promise<void>((resolve, reject) => {
        const call = client.Infer({ model: 'mnemo-tiny', prompt: 'trace me', maxTokens: 4, seed: 3 }, md);
        call.on('data', () => undefined);
        call.on('error', reject);
        call.on('end', resolve);
      });
      client.close();
      for (const s of subs) s.unsubscribe();
      await flushTracing();

      const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID);
      const byName = (n: string) => {
        const s = spans.find((x) => x.name === n);
        if (!s) throw new Error(`no span ${n} in the trace (have ${spans.map((x) => x.name).join(', ')})`);
        return s;
      };
      const [request, schedule, scheduler, dispatch, admit, prefill, first] = [
        'gateway.request',
        'gateway.schedule',
        'scheduler.schedule',
        'scheduler.dispatch',
        'node.admit',
        'node.prefill',
        'node.first_token',
      ].map(byName);
      expect(new Set(spans.map(serviceOf))).toEqual(new Set(['mnemo-gateway', 'mnemo-scheduler', 'mnemo-node-manager']));
      // gRPC metadata → the gateway's request span is the client's child.
      expect(parentOf(request!)).toBe(CLIENT_SPAN);
      expect(parentOf(schedule!)).toBe(request!.spanContext().spanId);
      // NATS headers: what the SCHEDULE message carried is the gateway's schedule span, the scheduler's parent.
      expect(seen[Subjects.SCHEDULE]).toBe(`00-${TRACE_ID}-${schedule!.spanContext().spanId}-01`);
      expect(parentOf(scheduler!)).toBe(schedule!.spanContext().spanId);
      expect(parentOf(dispatch!)).toBe(scheduler!.spanContext().spanId);
      // …and the node's infer message carried the dispatch span, the node's parent.
      expect(seen[nodeInferSubject(node.nodeId)]).toBe(`00-${TRACE_ID}-${dispatch!.spanContext().spanId}-01`);
      expect(parentOf(admit!)).toBe(dispatch!.spanContext().spanId);
      expect(parentOf(prefill!)).toBe(admit!.spanContext().spanId);
      expect(parentOf(first!)).toBe(prefill!.spanContext().spanId);
      expect(request!.events.map((e) => e.name)).toContain('first_token');
    },
  );

  it('a request without a client trace starts its own, and still crosses all three services', async () => {
    exporter.reset();
    const r = await fetch(`http://127.0.0.1:${cluster.gateway!.httpPort}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mnemo-tiny', prompt: 'hi', max_tokens: 2 }),
    });
    expect(r.status).toBe(200);
    await r.text();
    await flushTracing();
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'gateway.request')!;
    expect(root.parentSpanContext).toBeUndefined();
    const trace = spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
    expect(new Set(trace.map(serviceOf)).size).toBe(3);
  });
});
