export { tracerFor, addTestSpanProcessor, flushTracing, injectTrace, extractTrace, recordGetter, endWithError, inSpan } from './tracing.js';
export { natsTraceHeaders, natsTraceContext } from './nats.trace.js';
export { grpcTraceContext, injectGrpcTrace } from './grpc.trace.js';
