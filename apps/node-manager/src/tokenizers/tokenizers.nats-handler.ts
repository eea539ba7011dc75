import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { encodeMessage, QueueGroups, TokenizerChunkReplySchema, TokenizerChunkRequestSchema, tokenizerSubject } from '@mnemo/proto';
import { NATS_CONNECTION, natsEntryPoints } from '@mnemo/service-kit';
import type { TokenizerBundle } from '@mnemo/engine';
import { ServedTokenizers } from './served-tokenizers.js';

/** Largest slice per reply; NATS refuses messages over the server's max_payload (1 MiB by default). */
export const TOKENIZER_SLICE_BYTES = 512 * 1024;

/**
 * tokenizerSubject(sha256) for each bundle this node holds (queue group `tokenizers`: any node
 * with the same bytes may answer) → the slice of the bundle at the requested offset.
 */
export const TokenizersNatsHandler = natsEntryPoints(
  'TokenizersNatsHandler',
  [ServedTokenizers, NATS_CONNECTION],
  (nats, tokenizers, nc: NatsConnection) => {
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
    const slice = Math.max(1024, Math.min(TOKENIZER_SLICE_BYTES, maxPayload - 4096));
    for (const bundle of tokenizers.bundles()) {
      nats.respond(tokenizerSubject(bundle.sha256), {
        operation: 'tokenizer_chunk',
        request: TokenizerChunkRequestSchema,
        handle: (req) => sliceOf(bundle, req.offset, slice),
        reply: (o) => encodeMessage(TokenizerChunkReplySchema, 'ok' in o ? o.ok : { error: o.error }),
        timed: false,
        queue: QueueGroups.TOKENIZERS,
      });
    }
  },
);

function sliceOf(bundle: TokenizerBundle, offset: number, max: number): { totalBytes: number; data: Uint8Array } {
  if (offset > bundle.bytes.length)
    throw new MnemoError(ErrorCode.InvalidRequest, `offset ${offset} is past the end of the bundle (${bundle.bytes.length} bytes)`);
  return { totalBytes: bundle.bytes.length, data: bundle.bytes.subarray(offset, offset + max) };
}
