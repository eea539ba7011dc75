import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BpeTokenizer, type TokenizerJson } from './bpe.tokenizer.js';

/**
 * Everything a gateway needs to tokenize for a model directory, as one byte string a node can
 * hand over NATS: UTF-8 JSON `{"bos_token", "eos_token", "tokenizer": <tokenizer.json as is>}`.
 * The special-token names come from tokenizer_config.json. Addressed by its SHA-256, so a
 * gateway caches it once per content and can check what it received.
 */
export interface TokenizerBundle {
  readonly bytes: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`. */
  readonly sha256: string;
}

/** A special token in tokenizer_config.json: its name, or an AddedToken object. */
export type TokenRef = string | { content: string } | null | undefined;

/** Name of a special token in tokenizer_config.json (a string or an AddedToken object). */
export function tokenName(t: TokenRef): string | undefined {
  if (!t) return undefined;
  return typeof t === 'string' ? t : t.content;
}

/** Reads the bundle of a model directory without blocking the event loop; null when it has no tokenizer.json. */
export async function readTokenizerBundle(dir: string): Promise<TokenizerBundle | null> {
  const json = await readFile(join(dir, 'tokenizer.json'), 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (json === null) return null;
  const cfgText = await readFile(join(dir, 'tokenizer_config.json'), 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return '{}';
    throw e;
  });
  const cfg = JSON.parse(cfgText) as { bos_token?: TokenRef; eos_token?: TokenRef };
  // tokenizer.json is spliced in as text: a large vocabulary is not parsed and re-serialised here.
  const bos = JSON.stringify(tokenName(cfg.bos_token) ?? null);
  const eos = JSON.stringify(tokenName(cfg.eos_token) ?? null);
  const text = `{"bos_token":${bos},"eos_token":${eos},"tokenizer":${json}}`;
  const bytes = new TextEncoder().encode(text);
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Builds the tokenizer a bundle describes; throws on bytes that are not one. */
export function tokenizerFromBundle(bytes: Uint8Array): BpeTokenizer {
  const b = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as {
    bos_token?: string | null;
    eos_token?: string | null;
    tokenizer?: TokenizerJson;
  };
  if (typeof b !== 'object' || b === null || typeof b.tokenizer !== 'object' || b.tokenizer === null)
    throw new Error('not a tokenizer bundle: no "tokenizer" object');
  return new BpeTokenizer(b.tokenizer, { bosToken: b.bos_token ?? undefined, eosToken: b.eos_token ?? undefined });
}
