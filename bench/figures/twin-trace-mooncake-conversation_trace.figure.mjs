// twin-trace-mooncake-conversation_trace: Mooncake's published conversation trace on the twin
// (npm run twin -- trace --trace bench/traces/mooncake-conversation_trace.jsonl.gz); the figure is
// the one every trace replay draws.
export { figure } from '../lib/trace.figure.mjs';
