import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, isMnemoError } from '@mnemo/kv-core';
import { ByteTokenizer, tokenizerFromBundle, type Tokenizer } from '@mnemo/engine';
import type { ModelInfo } from '@mnemo/proto';
import { NodeClient } from '../nats/node.client.js';

/** Largest bundle accepted (real tokenizer.json files are a few MiB); a bigger one is refused, not buffered. */
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
/** A failed fetch is answered from the cache this long before it is tried again. */
export const RETRY_FAILED_AFTER_MS = 30_000;
const SLICE_TIMEOUT_MS = 5_000;

interface Entry {
  tokenizer: Promise<Tokenizer>;
  failedAt?: number;
}

/**
 * The tokenizer of each model the nodes serve, as their heartbeats describe it: the byte
 * vocabulary, or a bundle fetched once per content hash from a node that holds it (over NATS,
 * so nodes and gateway need not share files), checked against the hash and cached. A model
 * whose tokenizer cannot be had fails with one clear error, cached too: a bad model costs one
 * fetch per RETRY_FAILED_AFTER_MS, not one per request. Nothing here reads a file.
 */
@Injectable()
export class TokenizerCache {
  private readonly byHash = new Map<string, Entry>();
  private readonly byte = new ByteTokenizer();

  constructor(@Inject(NodeClient) private readonly nodes: Pick<NodeClient, 'tokenizerChunk'>) {}

  get(model: ModelInfo): Promise<Tokenizer> {
    switch (model.tokenizer) {
      case 'byte':
        return Promise.resolve(this.byte);
      case 'bpe':
        return this.bundled(model);
      default:
        return Promise.reject(
          new MnemoError(
            ErrorCode.Internal,
            `model '${model.id}' has no tokenizer: the node serving it found no tokenizer.json in the model directory`,
            {
              model: model.id,
            },
          ),
        );
    }
  }

  private bundled(model: ModelInfo): Promise<Tokenizer> {
    const sha = model.tokenizerSha256;
    const cached = this.byHash.get(sha);
    if (cached && (cached.failedAt === undefined || Date.now() - cached.failedAt < RETRY_FAILED_AFTER_MS)) return cached.tokenizer;
    const entry: Entry = { tokenizer: this.fetch(sha).then(tokenizerFromBundle) };
    entry.tokenizer = entry.tokenizer.catch((e: unknown) => {
      entry.failedAt = Date.now();
      const code = isMnemoError(e) ? e.code : ErrorCode.Internal;
      throw new MnemoError(
        code,
        `the tokenizer of model '${model.id}' (sha256 ${sha.slice(0, 12)}…) could not be loaded: ${(e as Error).message}`,
        { model: model.id },
      );
    });
    this.byHash.set(sha, entry);
    return entry.tokenizer;
  }

  /** The bundle's bytes, slice by slice, checked against the hash that names them. */
  private async fetch(sha: string): Promise<Uint8Array> {
    const slices: Uint8Array[] = [];
    let received = 0;
    let total: number | undefined;
    do {
      const { totalBytes, data } = await this.nodes.tokenizerChunk(sha, received, SLICE_TIMEOUT_MS);
      if (totalBytes > MAX_BUNDLE_BYTES)
        throw new MnemoError(ErrorCode.Internal, `bundle of ${totalBytes} bytes is over the ${MAX_BUNDLE_BYTES}-byte limit`);
      if (total !== undefined && totalBytes !== total) throw new MnemoError(ErrorCode.Internal, 'bundle size changed while it was read');
      total = totalBytes;
      if (data.length === 0 && received < total) throw new MnemoError(ErrorCode.Internal, `empty slice at ${received} of ${total} bytes`);
      slices.push(data);
      received += data.length;
    } while (received < total);
    const bytes = Buffer.concat(slices);
    if (bytes.length !== total || createHash('sha256').update(bytes).digest('hex') !== sha) {
      throw new MnemoError(ErrorCode.Internal, 'the bytes received do not match the advertised hash');
    }
    return bytes;
  }
}
