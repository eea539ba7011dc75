export interface Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
  encode(text: string): number[];
  /**
   * `encode` with bounded work: null as soon as the result is certain to have more than
   * `limit` tokens (checked before the expensive part of each word), so a huge body costs
   * O(limit) merging however it is shaped. Callers check limits with this, never with encode.
   */
  encodeWithin(text: string, limit: number): number[] | null;
  /** Decodes a whole sequence; invalid UTF-8 becomes U+FFFD. */
  decode(tokens: readonly number[]): string;
  /** Token id of a special token such as `<|im_start|>`, or undefined when the tokenizer has none. */
  specialTokenId(name: string): number | undefined;
}

/**
 * Turns a token stream into text pieces without splitting multi-byte characters:
 * text is emitted only once the bytes seen so far decode cleanly.
 */
export class IncrementalDetokenizer {
  private readonly tokens: number[] = [];
  private emitted = 0;

  constructor(private readonly tokenizer: Tokenizer) {}

  push(token: number): string {
    this.tokens.push(token);
    const text = this.tokenizer.decode(this.tokens);
    // A trailing replacement char usually means an unfinished UTF-8 sequence: wait for more.
    if (text.endsWith('\uFFFD')) return '';
    const piece = text.slice(this.emitted);
    this.emitted = text.length;
    return piece;
  }

  flush(): string {
    const text = this.tokenizer.decode(this.tokens);
    const piece = text.slice(this.emitted);
    this.emitted = text.length;
    return piece;
  }
}
