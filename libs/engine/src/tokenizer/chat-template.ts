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
  const start = tokenizer.specialTokenId('<|im_start|>');
  const end = tokenizer.specialTokenId('<|im_end|>');
  if (start === undefined || end === undefined) {
    throw new Error('tokenizer has no ChatML special tokens');
  }
  const out: number[] = [tokenizer.bosTokenId];
  for (const m of messages) {
    out.push(start, ...tokenizer.encode(`${m.role}\n`), ...tokenizer.encode(m.content), end, ...tokenizer.encode('\n'));
  }
  out.push(start, ...tokenizer.encode('assistant\n'));
  return out;
}
