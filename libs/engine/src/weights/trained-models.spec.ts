import { join } from 'node:path';
import { cpuBackend } from '../../test/test-backend.js';
import { ReferenceEngine } from '../reference/reference.engine.js';
import { applyChatTemplate } from '../tokenizer/chat-template.js';
import { loadTokenizer } from '../tokenizer/tokenizer.loader.js';
import { loadHfModel } from './hf-model.loader.js';

// The models tools/train/train_fortunes.py trained and the repo ships (npm start serves them).
const ROOT = join(process.cwd(), 'tools/train/models');
const MODELS = ['fortune-base', 'fortune-computers', 'fortune-songs'];
const IM_END = 258;

describe('trained fortune models', () => {
  const weights = MODELS.map((m) => loadHfModel(join(ROOT, m), m));

  it('share one architecture and tokenizer, and each fine-tune differs from the base in every layer', () => {
    const shape = (i: number) => ({ ...weights[i]!.config, id: '' });
    expect(shape(1)).toEqual(shape(0));
    expect(shape(2)).toEqual(shape(0));
    for (const ft of weights.slice(1)) {
      for (let l = 0; l < ft.config.layers; l++) {
        const name = `model.layers.${l}.self_attn.k_proj.weight`;
        expect(Buffer.from(ft.tensors.get(name)!.data.buffer).equals(Buffer.from(weights[0]!.tensors.get(name)!.data.buffer))).toBe(false);
      }
    }
  });

  it.each(MODELS)('%s answers a chat prompt with printable English text, not byte noise', async (model) => {
    const sut = new ReferenceEngine(cpuBackend(), [weights[MODELS.indexOf(model)]!], 16);
    try {
      const tok = loadTokenizer(join(ROOT, model));
      sut.openSequence('s', model, { temperature: 0, topP: 1, seed: 0 });
      let [r] = await sut.step([{ seqId: 's', tokens: applyChatTemplate(tok, [{ role: 'user', content: 'Tell me a fortune.' }]) }]);
      const out: number[] = [];
      for (let i = 0; i < 64; i++) {
        const t = sut.sample('s', r!.logits);
        if (t === IM_END) break;
        out.push(t);
        [r] = await sut.step([{ seqId: 's', tokens: [t] }]);
      }
      const text = tok.decode(out);
      expect(out.every((t) => t === 9 || t === 10 || (t >= 32 && t < 127))).toBe(true);
      expect(text).toMatch(/[A-Za-z]{3,}/);
    } finally {
      await sut.close();
    }
  });
});
