import type { ParsedInferRequest, PromptInput } from './infer.command.js';
import { commonFields, invalid, optionalInt, rejectUnsupported, requireObject, requiredString } from './request-field.validators.js';

/** The legacy completions API generates 16 tokens unless told otherwise. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;
const MAX_TOKENS = 1 << 30;

/** Shape-checks a `POST /v1/completions` body (OpenAI semantics) into a command. */
export function parseCompletionRequest(raw: unknown, tenant: string): ParsedInferRequest {
  const body = requireObject(raw, null);
  const model = requiredString(body, 'model');
  const input = parsePrompt(body.prompt);
  rejectUnsupported(body, ['echo', 'suffix', 'logprobs']);
  const bestOf = optionalInt(body, 'best_of', 1, Number.MAX_SAFE_INTEGER);
  if (bestOf !== undefined && bestOf !== 1) throw invalid('best_of', "only 'best_of': 1 is supported");
  const maxTokens = optionalInt(body, 'max_tokens', 1, MAX_TOKENS) ?? DEFAULT_COMPLETION_MAX_TOKENS;
  const { stream, includeUsage, ...rest } = commonFields(body);
  return { command: { operation: 'completions', tenant, model, input, maxTokens, ...rest }, stream, includeUsage };
}

/**
 * `prompt` as OpenAI accepts it: a string, token ids, or a one-element array of either.
 * Several prompts in one request would need several choices, which (like n > 1) we do not serve.
 */
function parsePrompt(v: unknown): PromptInput {
  if (v === undefined || v === null) throw invalid('prompt', "missing required parameter 'prompt'");
  if (typeof v === 'string') return { kind: 'text', text: v };
  if (Array.isArray(v)) {
    if (v.length > 0 && v.every(isTokenId)) return { kind: 'tokens', tokens: v as number[] };
    if (v.length === 1) {
      const only: unknown = v[0];
      if (typeof only === 'string') return { kind: 'text', text: only };
      if (Array.isArray(only) && only.length > 0 && only.every(isTokenId)) return { kind: 'tokens', tokens: only as number[] };
    }
    if (v.length > 1 && v.every((p) => typeof p === 'string' || Array.isArray(p))) {
      throw invalid('prompt', 'only one prompt per request is supported');
    }
  }
  throw invalid('prompt', "'prompt' must be a string, an array of token ids, or a one-element array of either");
}

function isTokenId(t: unknown): t is number {
  return typeof t === 'number' && Number.isInteger(t) && t >= 0 && t <= 0xffffffff;
}
