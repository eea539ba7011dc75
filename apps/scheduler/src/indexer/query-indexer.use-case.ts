import { Inject, Injectable } from '@nestjs/common';
import {
  blockKeys,
  BLOCKS_PER_CHUNK,
  ErrorCode,
  indexerQuery,
  isChunkKey,
  MnemoError,
  validateTokenIds,
  type KvDirectory,
} from '@mnemo/kv-core';
import { KV_DIRECTORY } from '../kv-directory/kv-report.port.js';

/** A Mooncake-Conductor-style query: a prompt's tokens, or its chunk keys, for one model. */
export type IndexerQuery =
  | { readonly model: string; readonly tenant: string; readonly tokenIds: readonly number[] }
  | { readonly model: string; readonly blockHashes: readonly string[] };

/** Per engine (a node id, or an external engine's id): the answer of Mooncake's `/query`. */
export interface IndexerAnswer {
  readonly data: Record<string, { longest_matched: number; GPU: number; CPU: number; DISK: number }>;
}

/** Most tokens one query may name (a prompt past this is not one Mnemo serves). */
export const MAX_QUERY_TOKENS = 1 << 20;

/**
 * Answers the indexer API from the KV directory: the prompt's keys at every 16-token boundary
 * (or the chunk keys given), then per engine the longest prefix it holds and the tokens of it
 * in each tier (kv-core indexerQuery). Tiers are named as Mooncake's indexer names media:
 * GPU (device), CPU (host pool), DISK (SSD pool).
 */
@Injectable()
export class QueryIndexerUseCase {
  constructor(@Inject(KV_DIRECTORY) private readonly directory: KvDirectory) {}

  execute(q: IndexerQuery): IndexerAnswer {
    let keys: readonly string[];
    if ('tokenIds' in q) {
      if (q.tokenIds.length > MAX_QUERY_TOKENS)
        throw new MnemoError(ErrorCode.InvalidRequest, `token_ids: at most ${MAX_QUERY_TOKENS} tokens`, { param: 'token_ids' });
      validateTokenIds(q.tokenIds);
      keys = blockKeys(q.model, q.tenant, [...q.tokenIds]);
    } else {
      if (!q.blockHashes.every(isChunkKey))
        throw new MnemoError(ErrorCode.InvalidRequest, 'block_hash: Mnemo chunk keys (32 lowercase hex characters, one per 256 tokens)', {
          param: 'block_hash',
        });
      // Chunk keys name whole chunks: place each at its chunk's last block boundary.
      keys = q.blockHashes.flatMap((k) => [...Array<string>(BLOCKS_PER_CHUNK - 1).fill(''), k]);
    }
    const hits = indexerQuery((k) => (k === '' ? [] : this.directory.holdings(k)), keys);
    const data: IndexerAnswer['data'] = {};
    for (const [engine, h] of hits)
      data[engine] = { longest_matched: h.longestMatched, GPU: h.tiers.device, CPU: h.tiers.host, DISK: h.tiers.ssd };
    return { data };
  }
}
