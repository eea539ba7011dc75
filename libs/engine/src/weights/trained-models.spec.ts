import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cpuBackend } from '../../test/test-backend.js';
import { ReferenceEngine } from '../reference/reference.engine.js';
import { applyChatTemplate, type ChatMessage } from '../tokenizer/chat-template.js';
import { loadTokenizer } from '../tokenizer/tokenizer.loader.js';
import { loadHfModel } from './hf-model.loader.js';
import { loadLoraMerged } from './lora-adapter.loader.js';

// The models tools/train/train_fortunes.py trained and the repo ships (npm start serves them).
const TRAIN = join(process.cwd(), 'tools/train');
const ROOT = join(TRAIN, 'models');
const MODELS = ['fortune-base', 'fortune-computers', 'fortune-songs'];
/** LoRA adapters of fortune-base (tools/train/train_lora.py), served merged. */
const ADAPTERS = ['fortune-lora-computers', 'fortune-lora-songs', 'fortune-lora-definitions'];
const ATTENTION = /^model\.layers\.\d+\.self_attn\.(q|k|v|o)_proj\.weight$/;
/** Every committed model file together must travel to a GPU machine (64 MiB working tree). */
const BUDGET_BYTES = 32 * 1024 * 1024;

interface ReferenceLogits {
  model: string;
  messages: ChatMessage[];
  tokens: number[];
  last_logits: number[];
}

function bytesUnder(dir: string): number {
  return readdirSync(dir).reduce((sum, n) => {
    const p = join(dir, n);
    return sum + (statSync(p).isDirectory() ? bytesUnder(p) : statSync(p).size);
  }, 0);
}

describe('trained fortune models', () => {
  const weights = MODELS.map((m) => loadHfModel(join(ROOT, m), m));

  it('fit the 32 MB budget together, tokenizers included', () => {
    expect(bytesUnder(ROOT)).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('are deep enough for DroidSpeak to choose layers and hold a 4,096-token context', () => {
    for (const w of weights) {
      expect(w.config.layers).toBeGreaterThanOrEqual(8);
      expect(w.config.maxContext).toBeGreaterThanOrEqual(4096);
    }
  });

  it('share one architecture and tokenizer, and each fine-tune differs from the base in every layer', () => {
    const shape = (i: number) => ({ ...weights[i]!.config, id: '' });
    expect(shape(1)).toEqual(shape(0));
    expect(shape(2)).toEqual(shape(0));
    const tokenizer = (m: string) => readFileSync(join(ROOT, m, 'tokenizer.json'));
    for (const m of MODELS.slice(1)) expect(tokenizer(m).equals(tokenizer(MODELS[0]!))).toBe(true);
    for (const ft of weights.slice(1)) {
      for (let l = 0; l < ft.config.layers; l++) {
        const name = `model.layers.${l}.self_attn.k_proj.weight`;
        expect(Buffer.from(ft.tensors.get(name)!.data.buffer).equals(Buffer.from(weights[0]!.tensors.get(name)!.data.buffer))).toBe(false);
      }
    }
  });

  it("tokenizes a chat as the trainer did and reproduces the trainer's logits (bf16 weights, fp32 compute)", async () => {
    const ref = JSON.parse(readFileSync(join(TRAIN, 'reference-logits.json'), 'utf8')) as ReferenceLogits;
    const tok = loadTokenizer(join(ROOT, ref.model));
    const tokens = applyChatTemplate(tok, ref.messages);
    expect(tokens).toEqual(ref.tokens);
    const sut = new ReferenceEngine(cpuBackend(), [weights[MODELS.indexOf(ref.model)]!], 16);
    try {
      sut.openSequence('s', ref.model, { temperature: 0, topP: 1, seed: 0 });
      const [r] = await sut.step([{ seqId: 's', tokens }]);
      const logits = r!.logits;
      expect(logits.length).toBe(ref.last_logits.length);
      let worst = 0;
      for (let i = 0; i < logits.length; i++) worst = Math.max(worst, Math.abs(logits[i]! - ref.last_logits[i]!));
      expect(worst).toBeLessThan(1e-4);
    } finally {
      await sut.close();
    }
  });

  it.each(MODELS)('%s answers a chat prompt with English words', async (model) => {
    const sut = new ReferenceEngine(cpuBackend(), [weights[MODELS.indexOf(model)]!], 16);
    try {
      const tok = loadTokenizer(join(ROOT, model));
      const imEnd = tok.specialTokenId('<|im_end|>');
      sut.openSequence('s', model, { temperature: 0, topP: 1, seed: 0 });
      let [r] = await sut.step([{ seqId: 's', tokens: applyChatTemplate(tok, [{ role: 'user', content: 'Tell me a fortune.' }]) }]);
      const out: number[] = [];
      for (let i = 0; i < 48; i++) {
        const t = sut.sample('s', r!.logits);
        if (t === imEnd) break;
        out.push(t);
        [r] = await sut.step([{ seqId: 's', tokens: [t] }]);
      }
      const words = tok.decode(out).match(/[A-Za-z]+/g) ?? [];
      expect(words.filter((w) => w.length > 2).length).toBeGreaterThanOrEqual(3);
    } finally {
      await sut.close();
    }
  });

  describe.each(ADAPTERS)('LoRA adapter %s', (name) => {
    const merged = loadLoraMerged(join(ROOT, name), name);
    const base = weights[0]!;

    it('is small, and merged it has the base architecture and tokenizer under its own id', () => {
      expect(statSync(join(ROOT, name, 'adapter_model.safetensors')).size).toBeLessThan(1024 * 1024);
      expect({ ...merged.config, id: '' }).toEqual({ ...base.config, id: '' });
      expect(merged.config.id).toBe(name);
      expect(readFileSync(join(ROOT, name, 'tokenizer.json')).equals(readFileSync(join(ROOT, MODELS[0]!, 'tokenizer.json')))).toBe(true);
    });

    it('changes the attention projections of every layer and nothing else', () => {
      for (const [t, w] of base.tensors) {
        const same = Buffer.from(merged.tensors.get(t)!.data.buffer).equals(Buffer.from(w.data.buffer));
        expect([t, same]).toEqual([t, !ATTENTION.test(t)]);
      }
    });

    const fixture = join(TRAIN, 'reference-logits-lora.json');
    const ref = JSON.parse(readFileSync(fixture, 'utf8')) as ReferenceLogits;
    // The fixture holds one adapter's logits (tools/train/train_lora.py --reference-logits NAME).
    if (ref.model === name)
      it("reproduces the trainer's logits with the adapter merged (fp32 merge, within 1e-4)", async () => {
        const sut = new ReferenceEngine(cpuBackend(), [merged], 16);
        try {
          sut.openSequence('s', name, { temperature: 0, topP: 1, seed: 0 });
          const [r] = await sut.step([{ seqId: 's', tokens: ref.tokens }]);
          let worst = 0;
          for (let i = 0; i < ref.last_logits.length; i++) worst = Math.max(worst, Math.abs(r!.logits[i]! - ref.last_logits[i]!));
          expect(r!.logits.length).toBe(ref.last_logits.length);
          expect(worst).toBeLessThan(1e-4);
        } finally {
          await sut.close();
        }
      });

    it('answers a chat prompt differently from its base', async () => {
      const sut = new ReferenceEngine(cpuBackend(), [base, merged], 16);
      try {
        const tok = loadTokenizer(join(ROOT, name));
        const tokens = applyChatTemplate(tok, [{ role: 'user', content: 'Tell me a fortune.' }]);
        const logits: Float32Array[] = [];
        for (const m of [MODELS[0]!, name]) {
          sut.openSequence(m, m, { temperature: 0, topP: 1, seed: 0 });
          const [r] = await sut.step([{ seqId: m, tokens }]);
          logits.push(Float32Array.from(r!.logits));
        }
        expect(logits[1]).not.toEqual(logits[0]);
      } finally {
        await sut.close();
      }
    });
  });
});
