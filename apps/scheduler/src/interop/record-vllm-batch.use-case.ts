import { tierOfMedium, VllmBlockFolder, type DirectoryChange, type KvDirectory } from '@mnemo/kv-core';
import { blockHashKey, type VllmEventBatch } from '@mnemo/service-kit';
import type { VllmSource } from './vllm-sources.parser.js';

/** What happened to each event of a batch, for metrics. */
export type VllmEventOutcome = 'stored' | 'removed' | 'cleared' | 'unknown_parent' | 'bad_block_size' | 'bad_shape' | 'unknown_medium';

/**
 * Folds one external engine's vLLM-format event batches into the KV directory under the
 * engine's id: stored blocks become our chunk and block keys (kv-core VllmBlockFolder) in the
 * tier their `medium` names, removed blocks leave that tier, AllBlocksCleared (or a restarted
 * engine) drops everything the engine held. The engine is not a Mnemo node, so routing never
 * dispatches to it; its holdings show in indexer answers.
 */
export class RecordVllmBatchUseCase {
  private readonly folder: VllmBlockFolder;

  constructor(
    readonly source: VllmSource,
    tenantSalt: string,
    private readonly directory: KvDirectory,
    private readonly count: (outcome: VllmEventOutcome) => void,
  ) {
    this.folder = new VllmBlockFolder(source.model, tenantSalt);
  }

  execute(batch: VllmEventBatch): void {
    const changes: DirectoryChange[] = [];
    const flush = () => {
      if (changes.length > 0) this.directory.apply(this.source.id, changes.splice(0));
    };
    for (const e of batch.events) {
      if (e.type === 'AllBlocksCleared') {
        flush();
        this.restarted();
        this.count('cleared');
        continue;
      }
      const tier = tierOfMedium(e.medium);
      if (!tier) {
        this.count('unknown_medium');
        continue;
      }
      if (e.type === 'BlockStored') {
        const r = this.folder.stored({
          blockHashes: e.blockHashes.map(blockHashKey),
          parentBlockHash: e.parentBlockHash === null ? null : blockHashKey(e.parentBlockHash),
          tokenIds: e.tokenIds,
          blockSize: e.blockSize,
        });
        if (!r.ok) {
          this.count(r.reason);
          continue;
        }
        changes.push({ kind: 'stored', tier, keys: r.keys });
        this.count('stored');
      } else {
        changes.push({ kind: 'removed', tier, keys: this.folder.removed(e.blockHashes.map(blockHashKey)) });
        this.count('removed');
      }
    }
    flush();
  }

  /** The engine's cache is empty (cleared, or its event sequence restarted). */
  restarted(): void {
    this.directory.dropNode(this.source.id);
    this.folder.cleared();
  }
}
