import type { Schema } from '@mnemo/service-kit';

/** KV events in vLLM's wire format over ZMQ. */
export const vllmEventsSchema = {
  NODE_VLLM_EVENTS: {
    type: 'string',
    doc:
      'vLLM-format KV events (ZMQ PUB, msgpack EventBatch) for routers ' +
      "that speak vLLM's: an endpoint to bind such as tcp://*:5557, or off",
    default: 'off',
  },
  NODE_VLLM_EVENTS_REPLAY: {
    type: 'string',
    doc: 'vLLM-format KV events: ROUTER endpoint answering replay requests such as tcp://*:5558, or off',
    default: 'off',
  },
  NODE_VLLM_EVENTS_TOKEN_IDS: {
    type: 'enum',
    doc:
      "vLLM-format KV events: on sends each block's token_ids (every tenant's prompt tokens, in clear, to every subscriber); " +
      'off sends token_ids: [] and only salted block hashes',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_VLLM_EVENTS_TOPIC: { type: 'string', doc: "vLLM-format KV events: first frame of every message (vLLM's topic; default empty)" },
  NODE_VLLM_EVENTS_MAX_CHUNKS: {
    type: 'int',
    doc: 'vLLM-format KV events: chunks whose tokens and block hashes are remembered to describe them as vLLM blocks (≈1.2 KiB each)',
    default: 32768,
    min: 1,
  },
} as const satisfies Schema;
