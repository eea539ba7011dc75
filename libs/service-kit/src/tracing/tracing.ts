import {
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * OpenTelemetry tracing for the services. One TracerProvider per service name (its spans carry
 * `service.name`), created on first use: exporting over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, to processors a test registered, or — neither —
 * the API's no-op tracer, which costs nothing and still passes a caller's context on.
 *
 * Context crosses services only through carriers: W3C `traceparent` / `tracestate` in NATS
 * message headers and gRPC metadata, extracted at every entry point from the root context. No
 * service reads another's active context, so a trace that holds together across services has
 * travelled on the wire even when the services share a process (the integration tests).
 */
const propagator = new W3CTraceContextPropagator();
const providers = new Map<string, TracerProvider>();
const testProcessors: SpanProcessor[] = [];

function exporting(): boolean {
  return testProcessors.length > 0 || Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The tracer of one service (gateway, scheduler, node-manager, profiler). */
export function tracerFor(service: string): Tracer {
  if (!exporting()) return trace.getTracerProvider().getTracer('mnemo');
  let provider = providers.get(service);
  if (!provider) {
    const processors = [...testProcessors];
    if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
      processors.push(new BatchSpanProcessor({ exporter: new LazyOtlpExporter() }));
    provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': `mnemo-${service}` }), spanProcessors: processors });
    providers.set(service, provider);
  }
  return provider.getTracer('mnemo');
}

/** Tests: every provider created from now on also sends its spans here (e.g. an in-memory exporter). */
export function addTestSpanProcessor(p: SpanProcessor): void {
  testProcessors.push(p);
}

/** Exports what every provider holds (tests, before reading an in-memory exporter; shutdown). */
export async function flushTracing(): Promise<void> {
  await Promise.all([...providers.values()].map((p) => p.forceFlush()));
}

/** Writes the context's span as `traceparent` (and `tracestate`) into a carrier. */
export function injectTrace<C>(ctx: Context, carrier: C, setter: TextMapSetter<C>): void {
  propagator.inject(ctx, carrier, setter);
}

/** The context a carrier names (from the root: nothing in-process leaks in). */
export function extractTrace<C>(carrier: C, getter: TextMapGetter<C>): Context {
  return propagator.extract(ROOT_CONTEXT, carrier, getter);
}

/** A carrier for plain header maps (HTTP). */
export const recordGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => c[k.toLowerCase()],
};

/** Ends a span with an error status naming the error's code (domain errors) or message. */
export function endWithError(span: Span, e: unknown): void {
  const code = (e as { code?: unknown })?.code;
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : e instanceof Error ? e.message : String(e) });
  span.end();
}

/** Runs `fn` inside a child span of `parent`, ended (with the error, if any) when it settles. */
export async function inSpan<T>(tracer: Tracer, name: string, parent: Context, fn: (ctx: Context, span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, {}, parent);
  try {
    const r = await fn(trace.setSpan(parent, span), span);
    span.end();
    return r;
  } catch (e) {
    endWithError(span, e);
    throw e;
  }
}

/** OTLP/HTTP exporter loaded on first export, so services that never trace never load it. */
class LazyOtlpExporter {
  private inner?: Promise<import('@opentelemetry/sdk-trace').SpanExporter>;
  private get(): Promise<import('@opentelemetry/sdk-trace').SpanExporter> {
    this.inner ??= import('@opentelemetry/exporter-trace-otlp-http').then(
      (m) => new m.OTLPTraceExporter() as unknown as import('@opentelemetry/sdk-trace').SpanExporter,
    );
    return this.inner;
  }
  export(
    spans: Parameters<import('@opentelemetry/sdk-trace').SpanExporter['export']>[0],
    done: Parameters<import('@opentelemetry/sdk-trace').SpanExporter['export']>[1],
  ): void {
    this.get().then(
      (e) => e.export(spans, done),
      (err: unknown) => done({ code: 1, error: err instanceof Error ? err : new Error(String(err)) }),
    );
  }
  async shutdown(): Promise<void> {
    if (this.inner) await (await this.inner).shutdown();
  }
  async forceFlush(): Promise<void> {
    if (this.inner) await (await this.inner).forceFlush?.();
  }
}
