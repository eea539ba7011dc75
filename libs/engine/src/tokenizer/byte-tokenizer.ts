import type { Tokenizer } from './tokenizer.interface.js';

/** Special tokens of the byte-level vocabulary, after the 256 byte ids. */
export const BYTE_SPECIAL_TOKENS = ['<|bos|>', '<|eos|>', '<|im_start|>', '<|im_end|>', '<|pad|>'] as const;

/**
 * Byte-level tokenizer for synthetic models: ids 0..255 are raw UTF-8 bytes,
 * then the special tokens. Every string round-trips exactly.
 */
export class ByteTokenizer implements Tokenizer {
  static readonly BYTE_VOCAB = 256;
  readonly vocabSize = ByteTokenizer.BYTE_VOCAB + BYTE_SPECIAL_TOKENS.length;
  readonly bosTokenId = this.requireSpecial('<|bos|>');
  readonly eosTokenId = this.requireSpecial('<|eos|>');
  private static readonly encoder = new TextEncoder();
  private static readonly decoder = new TextDecoder('utf-8', { fatal: false });

  encode(text: string): number[] {
    return Array.from(ByteTokenizer.encoder.encode(text));
  }

  encodeWithin(text: string, limit: number): number[] | null {
    // One token per byte; a UTF-16 unit is 1–3 bytes, so most oversized texts are refused unencoded.
    if (text.length > limit) return null;
    const tokens = this.encode(text);
    return tokens.length > limit ? null : tokens;
  }

  decode(tokens: readonly number[]): string {
    const bytes = tokens.filter((t) => t >= 0 && t < ByteTokenizer.BYTE_VOCAB);
    return ByteTokenizer.decoder.decode(Uint8Array.from(bytes));
  }

  specialTokenId(name: string): number | undefined {
    const i = (BYTE_SPECIAL_TOKENS as readonly string[]).indexOf(name);
    return i < 0 ? undefined : ByteTokenizer.BYTE_VOCAB + i;
  }

  private requireSpecial(name: string): number {
    const id = this.specialTokenId(name);
    if (id === undefined) throw new Error(`byte tokenizer lacks ${name}`);
    return id;
  }
}
