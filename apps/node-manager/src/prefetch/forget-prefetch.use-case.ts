import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { CHUNK_STORE, type ChunkStore } from '../kv-store/chunk-store.port.js';
import { AdvisoryRegistry } from './advisory.registry.js';
import type { ForgetPrefetchCommand } from './prefetch.command.js';

/**
 * The advisory was withdrawn (or its session deleted): what it prefetched and no request used
 * leaves the host pool now. Forgetting an unknown advisory is not an error (it may have expired,
 * or the node restarted): the reply is the same, and nothing changes.
 */
@Injectable()
export class ForgetPrefetchUseCase {
  constructor(
    @Inject(CHUNK_STORE) private readonly store: ChunkStore,
    @Inject(AdvisoryRegistry) private readonly advisories: AdvisoryRegistry,
  ) {}

  /** Returns the chunks dropped. */
  execute({ request }: ForgetPrefetchCommand): number {
    if (!request.advisoryId && !request.sessionId) throw new MnemoError(ErrorCode.InvalidRequest, 'advisory_id or session_id is required');
    let dropped = 0;
    for (const id of this.advisories.take(request.advisoryId, request.sessionId)) dropped += this.store.forget(id);
    // Not in the registry (expired here, or never seen), but the store may still hold its chunks.
    if (request.advisoryId) dropped += this.store.forget(request.advisoryId);
    return dropped;
  }
}
