import { ErrorCode, MnemoError, chunkKeys } from '@mnemo/kv-core';
import { applyChatTemplateWithin, type Tokenizer } from '@mnemo/engine';
import type { ModelInfo } from '@mnemo/proto';
import type { InferCommand } from './infer.command.js';

export interface BuiltPrompt {
  readonly tokens: readonly number[];
  readonly chunkKeys: readonly string[];
  /** The completion budget after defaults: prompt + maxTokens always fits the model's context. */
  readonly maxTokens: number;
}

/**
 * Turns a command into the prompt tokens a node runs, checking everything that depends on
 * the model (token ids in vocabulary, prompt limit, context size). Pure: a rejection here
 * happens before anything is sent anywhere.
 */
export function buildPrompt(command: InferCommand, model: ModelInfo, tokenizer: Tokenizer, maxPromptTokens: number): BuiltPrompt {
  const param = command.input.kind === 'chat' ? 'messages' : 'prompt';
  // Tokenizing stops as soon as the limit is certain to be passed: a huge body costs bounded work.
  const tokens = tokenize(command, tokenizer, model.vocabSize, maxPromptTokens);
  if (tokens === null || tokens.length > maxPromptTokens) {
    const count = tokens === null ? `more than ${maxPromptTokens}` : String(tokens.length);
    throw tooLong(
      param,
      `the prompt has ${count} tokens; this server accepts at most ${maxPromptTokens}`,
      tokens?.length ?? maxPromptTokens + 1,
    );
  }
  const context = model.maxContext;
  let maxTokens = command.maxTokens;
  if (context > 0) {
    if (maxTokens === undefined) maxTokens = context - tokens.length;
    if (maxTokens <= 0 || tokens.length + maxTokens > context) {
      throw tooLong(
        param,
        `This model's maximum context length is ${context} tokens. However, you requested ` +
          `${tokens.length + Math.max(maxTokens, 0)} tokens (${tokens.length} ` +
          `in the prompt, ${Math.max(maxTokens, 0)} for the completion). ` +
          `Please reduce the length of the prompt or the completion.`,
        tokens.length,
      );
    }
  }
  // A node that reports no context size still needs a bound: the gateway's prompt limit.
  maxTokens ??= maxPromptTokens;
  return { tokens, chunkKeys: chunkKeys(model.id, command.tenant, tokens), maxTokens };
}

/** The prompt's token ids, or null once it is sure to have more than `limit`. */
function tokenize(command: InferCommand, tokenizer: Tokenizer, vocabSize: number, limit: number): number[] | null {
  const input = command.input;
  switch (input.kind) {
    case 'chat':
      return applyChatTemplateWithin(tokenizer, input.messages, limit);
    case 'text': {
      // Same convention as the chat template: a sequence starts with BOS.
      const ids = tokenizer.encodeWithin(input.text, limit - 1);
      return ids === null ? null : [tokenizer.bosTokenId, ...ids];
    }
    case 'tokens': {
      if (input.tokens.length > limit) return null;
      const vocab = vocabSize > 0 ? vocabSize : tokenizer.vocabSize;
      const bad = input.tokens.findIndex((t) => t >= vocab);
      if (bad >= 0) {
        throw new MnemoError(ErrorCode.InvalidRequest, `prompt[${bad}] = ${input.tokens[bad]} is outside the vocabulary (size ${vocab})`, {
          param: 'prompt',
        });
      }
      return [...input.tokens];
    }
  }
}

function tooLong(param: string, message: string, promptTokens: number): MnemoError {
  return new MnemoError(ErrorCode.PromptTooLong, message, { param, promptTokens });
}
