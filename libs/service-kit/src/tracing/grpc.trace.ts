import type { Metadata } from '@grpc/grpc-js';
import type { Context, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { extractTrace, injectTrace } from './tracing.js';

const getter: TextMapGetter<Metadata> = {
  keys: (m) => Object.keys(m.getMap()),
  get: (m, k) => {
    const v = m.get(k)[0];
    return v === undefined ? undefined : v.toString();
  },
};
const setter: TextMapSetter<Metadata> = { set: (m, k, v) => m.set(k, v) };

/** The context gRPC metadata names (`traceparent`, `tracestate`). */
export function grpcTraceContext(metadata: Metadata): Context {
  return extractTrace(metadata, getter);
}

/** Writes the context's span into outgoing gRPC metadata. */
export function injectGrpcTrace(ctx: Context, metadata: Metadata): void {
  injectTrace(ctx, metadata, setter);
}
