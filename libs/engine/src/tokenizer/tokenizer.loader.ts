import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSyntheticModel } from '../model/model.catalog.js';
import { BpeTokenizer, type TokenizerJson } from './bpe.tokenizer.js';
import { ByteTokenizer } from './byte-tokenizer.js';
import type { Tokenizer } from './tokenizer.interface.js';
import { tokenName, type TokenRef } from './tokenizer.bundle.js';

/** Loads tokenizer.json (+ tokenizer_config.json for bos/eos names) from a model directory. */
export function loadTokenizerDir(dir: string): BpeTokenizer {
  const path = join(dir, 'tokenizer.json');
  if (!existsSync(path)) throw new Error(`${dir}: no tokenizer.json`);
  const json = JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson;
  const cfgPath = join(dir, 'tokenizer_config.json');
  const cfg = existsSync(cfgPath) ? (JSON.parse(readFileSync(cfgPath, 'utf8')) as { bos_token?: TokenRef; eos_token?: TokenRef }) : {};
  return new BpeTokenizer(json, { bosToken: tokenName(cfg.bos_token), eosToken: tokenName(cfg.eos_token) });
}

/**
 * The tokenizer for a model: synthetic catalog models use the byte vocabulary,
 * anything else must be a directory holding tokenizer.json.
 */
export function loadTokenizer(modelIdOrDir: string): Tokenizer {
  if (isSyntheticModel(modelIdOrDir)) return new ByteTokenizer();
  if (existsSync(join(modelIdOrDir, 'tokenizer.json'))) return loadTokenizerDir(modelIdOrDir);
  throw new Error(`no tokenizer for ${modelIdOrDir}: not a synthetic model id and no tokenizer.json there`);
}
