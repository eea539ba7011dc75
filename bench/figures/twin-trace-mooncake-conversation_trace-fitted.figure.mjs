// twin-trace-mooncake-conversation_trace-fitted: the same replay with its load fitted to the paper's
// local cache-aware TTFT (npm run twin -- trace --trace bench/traces/mooncake-conversation_trace.jsonl.gz
// --fit-ttft-ms 3580); the figure is the one every trace replay draws.
export { figure } from '../lib/trace.figure.mjs';
