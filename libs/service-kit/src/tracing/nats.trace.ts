import { headers, type Msg, type MsgHdrs } from '@nats-io/transport-node';
import type { Context, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { extractTrace, injectTrace } from './tracing.js';

const setter: TextMapSetter<MsgHdrs> = { set: (h, k, v) => h.set(k, v) };
const getter: TextMapGetter<MsgHdrs | undefined> = { keys: (h) => (h ? [...h.keys()] : []), get: (h, k) => h?.get(k) || undefined };

/** NATS headers carrying the context's span (undefined when there is none to carry). */
export function natsTraceHeaders(ctx: Context): MsgHdrs | undefined {
  const h = headers();
  injectTrace(ctx, h, setter);
  return h.has('traceparent') ? h : undefined;
}

/** The context a NATS message's headers name. */
export function natsTraceContext(msg: Pick<Msg, 'headers'>): Context {
  return extractTrace(msg.headers, getter);
}
