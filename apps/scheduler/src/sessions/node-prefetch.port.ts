import type { PrefetchRequest, ForgetRequest } from '@mnemo/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { PrefetchRequestSchema, ForgetRequestSchema } from '@mnemo/proto';

/** What a node said to a prefetch: `unavailable` = it has no prefetch handler (or is gone). */
export type PrefetchOutcome =
  | { readonly kind: 'queued'; readonly chunks: number }
  | { readonly kind: 'unavailable' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'refused'; readonly code: string };

export type PrefetchInit = Exclude<MessageInitShape<typeof PrefetchRequestSchema>, PrefetchRequest>;
export type ForgetInit = Exclude<MessageInitShape<typeof ForgetRequestSchema>, ForgetRequest>;

/** Tells nodes about advisories (the node half acts on them). Never throws: a node's trouble is an outcome. */
export interface NodePrefetcher {
  prefetch(nodeId: string, request: PrefetchInit): Promise<PrefetchOutcome>;
  /** Best effort; resolves whatever the node does (`queued.chunks`: the chunks it freed). */
  forget(nodeId: string, request: ForgetInit): Promise<PrefetchOutcome>;
}

export const NODE_PREFETCHER = Symbol('NODE_PREFETCHER');
