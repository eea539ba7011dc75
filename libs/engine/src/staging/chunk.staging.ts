import { ErrorCode, MnemoError, type KvBlockLedger } from '@mnemo/kv-core';
import type { KvStaging, StagedChunkRank, StagingStats } from '../engine.interface.js';

/** What staging needs of one engine: each model's ledger, its chunk payload size, and how to write KV into blocks. */
export interface StagingHost {
  /** The model's ledger; throws ModelNotFound for a model the engine does not serve. */
  ledger(model: string): KvBlockLedger;
  /** Floats in one whole chunk payload of the model; undefined when it keeps no KV bytes. */
  payloadElems(model: string): number | undefined;
  /** Writes a chunk payload into device blocks `ids` (16 tokens each, in order); absent where the device keeps no bytes. */
  write?(model: string, ids: readonly number[], payload: Float32Array): void;
}

/**
 * {@link KvStaging} over an engine's ledgers: the ledger decides where a chunk may go (free blocks
 * only) and when a prefill takes it; the engine writes the bytes. A payload of the wrong size is
 * refused before anything is taken, and a failed write gives the blocks back.
 */
export function chunkStaging(host: StagingHost): KvStaging {
  return {
    stage(model: string, key: string, payload: Float32Array, rank: StagedChunkRank): boolean {
      const ledger = host.ledger(model);
      const elems = host.payloadElems(model);
      if (elems === undefined) return false;
      if (payload.length !== elems)
        throw new MnemoError(ErrorCode.InvalidRequest, `staged chunk of ${model} has ${payload.length} floats, a chunk has ${elems}`);
      const ids = ledger.stage(key, rank);
      if (!ids) return false;
      try {
        host.write?.(model, ids, payload);
      } catch (e) {
        ledger.unstage(key);
        throw e;
      }
      return true;
    },
    unstage: (model, key) => host.ledger(model).unstage(key),
    stats(model: string): StagingStats {
      const ledger = host.ledger(model);
      return { ...ledger.staging, chunks: ledger.blocks.stagedChunks };
    },
  };
}
