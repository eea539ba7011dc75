import type { FinishReasonName, Usage } from './infer.run.js';

/** The bits of a run every response object repeats. */
export interface RunHeader {
  readonly id: string;
  readonly model: string;
  readonly created: number;
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** How many prompt tokens came from the KV cache (OpenAI's prompt caching field). */
  prompt_tokens_details: { cached_tokens: number };
  /**
   * Mnemo extension, only when the prompt's prefix reused a base model's KV (DroidSpeak): which
   * model, the reuse pattern and the layers recomputed. The answer is then an approximation.
   */
  kv_reuse?: { base_model: string; pattern: { r1: number; u1: number; r2: number }; recomputed_layers: number[]; reused_tokens: number };
}

/**
 * The JSON objects of one OpenAI endpoint, non-streamed and streamed. Chat and legacy
 * completions differ only in these shapes; the streaming logic is shared.
 */
export interface OpenAiFormat {
  /** Sent once before any text (chat announces the assistant role); undefined = nothing. */
  opening(h: RunHeader): object | undefined;
  delta(h: RunHeader, text: string): object;
  /** `usage` is null unless the client gets usage on this chunk. */
  finish(h: RunHeader, reason: FinishReasonName, usage: OpenAiUsage | null): object;
  /** The separate `choices: []` chunk of `stream_options.include_usage`. */
  usageOnly(h: RunHeader, usage: OpenAiUsage): object;
  complete(h: RunHeader, text: string, reason: FinishReasonName, usage: OpenAiUsage): object;
}

export function toOpenAiUsage(u: Usage): OpenAiUsage {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    ...(u.kvReuse
      ? {
          kv_reuse: {
            base_model: u.kvReuse.baseModel,
            pattern: { ...u.kvReuse.pattern },
            recomputed_layers: [...u.kvReuse.recomputedLayers],
            reused_tokens: u.kvReuse.reusedTokens,
          },
        }
      : {}),
  };
}

export const chatFormat: OpenAiFormat = {
  opening: (h) => chatChunk(h, { role: 'assistant', content: '' }, null),
  delta: (h, text) => chatChunk(h, { content: text }, null),
  finish: (h, reason, usage) => ({ ...chatChunk(h, {}, reason), ...(usage ? { usage } : {}) }),
  usageOnly: (h, usage) => envelope(h, 'chat.completion.chunk', [], usage),
  complete: (h, text, reason, usage) =>
    envelope(h, 'chat.completion', [choice({ message: { role: 'assistant', content: text, refusal: null } }, reason)], usage),
};

export const textFormat: OpenAiFormat = {
  opening: () => undefined,
  delta: (h, text) => textChunk(h, text, null),
  finish: (h, reason, usage) => ({ ...textChunk(h, '', reason), ...(usage ? { usage } : {}) }),
  usageOnly: (h, usage) => envelope(h, 'text_completion', [], usage),
  complete: (h, text, reason, usage) => envelope(h, 'text_completion', [choice({ text }, reason)], usage),
};

/** A response object, in OpenAI's key order; `usage` only where given. */
function envelope(h: RunHeader, object: string, choices: object[], usage?: OpenAiUsage): object {
  return { id: h.id, object, created: h.created, model: h.model, choices, ...(usage ? { usage } : {}) };
}

/** The one choice of a run; `body` (the delta, message or text) sits between `index` and `logprobs`, OpenAI's order. */
function choice(body: object, reason: FinishReasonName | null): object {
  return { index: 0, ...body, logprobs: null, finish_reason: reason };
}

function chatChunk(h: RunHeader, delta: object, reason: FinishReasonName | null): object {
  return envelope(h, 'chat.completion.chunk', [choice({ delta }, reason)]);
}

function textChunk(h: RunHeader, text: string, reason: FinishReasonName | null): object {
  return envelope(h, 'text_completion', [choice({ text }, reason)]);
}
