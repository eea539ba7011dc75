import type { RestorePrompt } from '@mnemo/kv-core';

/** A request's prompt as the store sees it: its model and its chunk keys (one per whole 256-token chunk), kv-core's RestorePrompt. */
export interface StoredPrompt extends RestorePrompt {
  readonly model: string;
  /** Other nodes holding chunks of this prompt (InferenceRequest.kv_sources); the local tiers ignore them. */
  readonly sources?: readonly PeerSource[];
}

/** A node that holds some of a prompt's chunks, and where to fetch them. */
export interface PeerSource {
  readonly nodeId: string;
  readonly address: string;
  readonly chunkKeys: readonly string[];
}
