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
 * Turns a token stream into text pieces without splitting multi-byte characters: text is
 * emitted only once the bytes seen so far decode cleanly. Linear in the stream length: each
 * step decodes only the window since the last clean cut (`prefix`) — decoding the whole stream
 * every token made a long answer quadratic in gateway CPU. The window starts where an earlier
 * decode ended on a complete character, so its text is exactly the whole decode's suffix.
 */
export class IncrementalDetokenizer {
  private readonly tokens: number[] = [];
  /** Start of the decode window: a character boundary. */
  private prefix = 0;
  /** End of what was emitted; tokens from here on are not yet text. */
  private read = 0;

  constructor(private readonly tokenizer: Tokenizer) {}

  push(token: number): string {
    this.tokens.push(token);
    const emitted = this.tokenizer.decode(this.tokens.slice(this.prefix, this.read));
    const text = this.tokenizer.decode(this.tokens.slice(this.prefix));
    // A trailing replacement char usually means an unfinished UTF-8 sequence: wait for more.
    if (text.length <= emitted.length || text.endsWith('\uFFFD')) return '';
    this.prefix = this.read;
    this.read = this.tokens.length;
    return text.slice(emitted.length);
  }

  flush(): string {
    const emitted = this.tokenizer.decode(this.tokens.slice(this.prefix, this.read));
    const text = this.tokenizer.decode(this.tokens.slice(this.prefix));
    this.prefix = this.read = this.tokens.length;
    return text.slice(emitted.length);
  }
}
