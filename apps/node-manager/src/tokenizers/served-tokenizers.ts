import { basename } from 'node:path';
import { isSyntheticModel, readTokenizerBundle, type TokenizerBundle } from '@mnemo/engine';

/** How a gateway tokenizes for one served model (ModelInfo.tokenizer in heartbeats). */
export type TokenizerKind = 'byte' | 'bpe' | '';

export interface ServedTokenizer {
  readonly kind: TokenizerKind;
  readonly bundle?: TokenizerBundle;
}

/**
 * The tokenizer of every model this node serves, read once at start-up (asynchronously): the
 * byte vocabulary for synthetic catalog models, the tokenizer bundle of a model directory, or
 * none (a directory without tokenizer.json). Heartbeats advertise kind and hash; gateways fetch
 * a bundle by hash over NATS, so they need no access to this machine's files.
 */
export class ServedTokenizers {
  private constructor(private readonly byModel: ReadonlyMap<string, ServedTokenizer>) {}

  /** `models` as NODE_MODELS lists them; a directory's model id is its base name, as the engine names it. */
  static async load(models: readonly string[]): Promise<ServedTokenizers> {
    const byModel = new Map<string, ServedTokenizer>();
    for (const m of models) {
      if (isSyntheticModel(m)) byModel.set(m, { kind: 'byte' });
      else {
        const bundle = await readTokenizerBundle(m);
        byModel.set(basename(m), bundle ? { kind: 'bpe', bundle } : { kind: '' });
      }
    }
    return new ServedTokenizers(byModel);
  }

  /** ModelInfo fields for a served model. */
  describe(modelId: string): { tokenizer: TokenizerKind; tokenizerSha256: string } {
    const t = this.byModel.get(modelId);
    return { tokenizer: t?.kind ?? '', tokenizerSha256: t?.bundle?.sha256 ?? '' };
  }

  /** Distinct bundles (two directories may hold the same tokenizer). */
  bundles(): TokenizerBundle[] {
    const bySha = new Map<string, TokenizerBundle>();
    for (const t of this.byModel.values()) if (t.bundle) bySha.set(t.bundle.sha256, t.bundle);
    return [...bySha.values()];
  }
}
