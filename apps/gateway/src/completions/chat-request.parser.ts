import type { ChatMessage } from '@mnemo/engine';
import type { ParsedInferRequest } from './infer.command.js';
import {
  commonFields,
  invalid,
  optionalInt,
  rejectUnsupported,
  requireObject,
  requiredString,
  type Body,
} from './request-field.validators.js';

const ROLES: ReadonlySet<string> = new Set<ChatMessage['role']>(['system', 'user', 'assistant', 'tool', 'developer']);
const MAX_TOKENS = 1 << 30;

/** Shape-checks a `POST /v1/chat/completions` body (OpenAI semantics) into a command. */
export function parseChatRequest(raw: unknown, tenant: string): ParsedInferRequest {
  const body = requireObject(raw, null);
  const model = requiredString(body, 'model');
  const messages = parseMessages(body.messages);
  rejectUnsupported(body, ['tools', 'functions', 'tool_choice', 'function_call', 'logprobs', 'top_logprobs', 'audio']);
  const format = body.response_format;
  if (format !== undefined && format !== null && requireObject(format, 'response_format').type !== 'text') {
    throw invalid('response_format', 'only \'response_format\': {"type": "text"} is supported');
  }
  // max_completion_tokens is the newer spelling; max_tokens is deprecated but still common.
  const maxTokens = optionalInt(body, 'max_completion_tokens', 1, MAX_TOKENS) ?? optionalInt(body, 'max_tokens', 1, MAX_TOKENS);
  const { stream, includeUsage, ...rest } = commonFields(body);
  return {
    command: { operation: 'chat.completions', tenant, model, input: { kind: 'chat', messages }, maxTokens, ...rest },
    stream,
    includeUsage,
  };
}

function parseMessages(v: unknown): ChatMessage[] {
  if (v === undefined || v === null) throw invalid('messages', "missing required parameter 'messages'");
  if (!Array.isArray(v) || v.length === 0) throw invalid('messages', "'messages' must be a non-empty array");
  return v.map((m, i) => parseMessage(m, `messages[${i}]`));
}

function parseMessage(v: unknown, param: string): ChatMessage {
  const m: Body = requireObject(v, param);
  if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
    throw invalid(`${param}.role`, `'${param}.role' must be one of ${[...ROLES].join(', ')}`);
  }
  return { role: m.role as ChatMessage['role'], content: parseContent(m.content, `${param}.content`) };
}

/** A string, or the array-of-text-parts form the SDKs also send; other part types are not supported. */
function parseContent(v: unknown, param: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length > 0) {
    return v
      .map((part, i) => {
        const p = requireObject(part, `${param}[${i}]`);
        if (p.type !== 'text' || typeof p.text !== 'string') {
          throw invalid(`${param}[${i}]`, `'${param}[${i}]' must be {"type": "text", "text": string}`);
        }
        return p.text;
      })
      .join('');
  }
  throw invalid(param, `'${param}' must be a string`);
}
