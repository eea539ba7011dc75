import type { Context } from '@opentelemetry/api';
import type { ChatMessage } from '@mnemo/engine';

/** What the client asked to continue: chat messages (templated), raw text, or token ids. */
export type PromptInput =
  | { readonly kind: 'chat'; readonly messages: readonly ChatMessage[] }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tokens'; readonly tokens: readonly number[] };

/** Entry point of a request; also the `operation` label of its metrics. */
export type InferOperation = 'chat.completions' | 'completions' | 'grpc.infer';

/**
 * One inference, whatever door it came through (REST chat, REST completions, gRPC).
 * Shape-checked already; model-dependent checks (model exists, context fits, token ids
 * in vocabulary) belong to the use case, which has the model catalog.
 */
export interface InferCommand {
  readonly operation: InferOperation;
  readonly tenant: string;
  readonly model: string;
  readonly input: PromptInput;
  /** Undefined = as many as the model's context leaves room for. */
  readonly maxTokens?: number;
  /** 0 = greedy. */
  readonly temperature: number;
  readonly topP: number;
  readonly seed?: number;
  /** Stop strings, matched on the detokenized text by the gateway. */
  readonly stop: readonly string[];
  /** The model's EOS does not end the reply (vLLM's `ignore_eos`); undefined = false. */
  readonly ignoreEos?: boolean;
  readonly sessionId?: string;
  /** Higher runs first when the node has to choose; 0 is normal. */
  readonly priority: number;
  /** The client's trace context (W3C traceparent of the HTTP request or gRPC call); root when none came. */
  readonly trace?: Context;
}

/** What a REST body parser yields: the command plus how the client wants the answer. */
export interface ParsedInferRequest {
  readonly command: InferCommand;
  readonly stream: boolean;
  readonly includeUsage: boolean;
}
