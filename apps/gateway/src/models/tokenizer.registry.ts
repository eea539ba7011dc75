import { Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { loadTokenizer, type Tokenizer } from '@mnemo/engine';

/**
 * One tokenizer per model id, built on first use (synthetic models: the byte vocabulary;
 * others: the tokenizer.json of the model directory). The gateway tokenizes — chat template,
 * prompt limits, chunk keys — so nodes only ever receive token ids.
 */
@Injectable()
export class TokenizerRegistry {
  private readonly byId = new Map<string, Tokenizer>();

  get(modelId: string): Tokenizer {
    let t = this.byId.get(modelId);
    if (!t) {
      try {
        t = loadTokenizer(modelId);
      } catch (e) {
        throw new MnemoError(ErrorCode.Internal, `the gateway has no tokenizer for model '${modelId}': ${(e as Error).message}`);
      }
      this.byId.set(modelId, t);
    }
    return t;
  }
}
