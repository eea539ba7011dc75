import type { Tokenizer } from './tokenizer.interface.js';

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool' | 'developer';
  readonly content: string;
}

/**
 * ChatML template (`<|im_start|>role\ncontent<|im_end|>\n` … `<|im_start|>assistant\n`),
 * the one Qwen models use; the tokenizer must know `<|im_start|>` and `<|im_end|>`.
 * Token ids are produced directly so user text can never forge a special token.
 */
export function applyChatTemplate(tokenizer: Tokenizer, messages: readonly ChatMessage[]): number[] {
  return applyChatTemplateWithin(tokenizer, messages, Infinity)!;
}

/** {@link applyChatTemplate} with bounded work: null once the prompt is sure to exceed `limit` tokens. */
export function applyChatTemplateWithin(tokenizer: Tokenizer, messages: readonly ChatMessage[], limit: number): number[] | null {
  const start = tokenizer.specialTokenId('<|im_start|>');
  const end = tokenizer.specialTokenId('<|im_end|>');
  if (start === undefined || end === undefined) {
    throw new Error('tokenizer has no ChatML special tokens');
  }
  const out: number[] = [tokenizer.bosTokenId];
  const add = (text: string): boolean => {
    const ids = tokenizer.encodeWithin(text, limit - out.length);
    if (ids === null) return false;
    for (const id of ids) out.push(id);
    return true;
  };
  for (const m of messages) {
    out.push(start);
    if (!add(`${m.role}\n`) || !add(m.content)) return null;
    out.push(end);
    if (!add('\n')) return null;
  }
  out.push(start);
  if (!add('assistant\n') || out.length > limit) return null;
  return out;
}
