// Hardening issue, defects 4 and 5, end to end: a model served from a Hugging Face-style directory
// (safetensors written by the repo's own writer, a small byte-level BPE tokenizer.json) answers
// chat completions through gateway → scheduler → node. The gateway has no access to the
// directory: it fetches the tokenizer from the node over NATS by its hash. A model without a
// tokenizer fails with one clear error, and a 2 MiB single-word body is answered within a bound.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyChatTemplate, loadTokenizerDir, ReferenceEngine, saveHfModel, syntheticWeightsFor } from '@mnemo/engine';
import { writeChatBpeTokenizer } from '../../libs/engine/test/bpe.fixture.js';
import { Cluster, waitFor, referenceNodeEnv } from './cluster.js';

const WITH_TOKENIZER = 'tiny-bpe';
const WITHOUT_TOKENIZER = 'tiny-untokenized';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** mnemo-tiny's weights under another name, with the BPE vocabulary's special ids (261 ids in all). */
function writeModelDir(root: string, id: string, withTokenizer: boolean): string {
  const dir = join(root, id);
  const w = syntheticWeightsFor('mnemo-tiny');
  // Byte ids 0–255, merges 256–257, then <|endoftext|> 258, <|im_start|> 259, <|im_end|> 260.
  saveHfModel(dir, { ...w, config: { ...w.config, id, bosTokenId: 258, eosTokenId: 260 } });
  if (withTokenizer) {
    writeChatBpeTokenizer(dir, { bos_token: '<|endoftext|>', eos_token: '<|im_end|>' });
  }
  return dir;
}

describe('a model served from a directory', () => {
  let root: string;
  let dir: string;
  let cluster: Cluster;
  let base: string;

  const chat = (model: string, content: string, extra: object = {}) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 8, temperature: 0, ...extra }),
    });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mnemo-models-'));
    dir = writeModelDir(root, WITH_TOKENIZER, true);
    const bare = writeModelDir(root, WITHOUT_TOKENIZER, false);
    cluster = await Cluster.start({
      nodes: 1,
      gateway: true,
      nodeEnv: referenceNodeEnv(`${dir},${bare}`, 64),
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    await waitFor(
      async () => ((await (await fetch(`${base}/v1/models`)).json()) as Json).data.length === 2,
      5000,
      'both models at the gateway',
    );
  });

  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('lists the directory models under their directory names', async () => {
    const body = (await (await fetch(`${base}/v1/models`)).json()) as Json;
    expect(body.data.map((m: Json) => [m.id, m.engine]).sort()).toEqual([
      [WITH_TOKENIZER, 'reference'],
      [WITHOUT_TOKENIZER, 'reference'],
    ]);
  });

  it('answers a chat completion with the engine’s own continuation, tokenized by the directory’s tokenizer', async () => {
    const content = 'hello, well held';
    const res = await chat(WITH_TOKENIZER, content);
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);

    const tok = loadTokenizerDir(dir);
    const prompt = applyChatTemplate(tok, [{ role: 'user', content }]);
    expect(prompt).toContain(256); // the merges were applied: the gateway really ran this BPE
    expect(body.usage.prompt_tokens).toBe(prompt.length);
    const engine = await ReferenceEngine.create({ models: [dir], backend: 'cpu', kvBlocks: 64 });
    try {
      const sampling = { temperature: 0, topP: 1, seed: 0 };
      const tokens = [(await engine.prefill([{ seqId: 's', model: WITH_TOKENIZER, tokens: prompt, sampling }]))[0]!.token];
      while (tokens.length < body.usage.completion_tokens) tokens.push((await engine.decode(['s']))[0]!.token);
      expect(body.usage.completion_tokens).toBeGreaterThan(0);
      expect(body.choices[0].message.content).toBe(tok.decode(tokens.filter((t) => t !== tok.eosTokenId)));
    } finally {
      await engine.close();
    }
  });

  it('answers a 2 MiB single-word body within 2 s', async () => {
    const word = 'h'.repeat(2 * 1024 * 1024 - 256);
    const t0 = performance.now();
    const res = await chat(WITH_TOKENIZER, word);
    const ms = performance.now() - t0;
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.code).toBe('context_length_exceeded');
    expect(ms).toBeLessThan(2000);
  });

  it('fails clearly, the same way each time, for a model whose directory has no tokenizer', async () => {
    const answers = [];
    for (let i = 0; i < 2; i++) {
      const res = await chat(WITHOUT_TOKENIZER, 'hi');
      // 5xx messages end with the error id of their log line; the rest must not change.
      answers.push({
        status: res.status,
        message: (((await res.json()) as Json).error.message as string).replace(/ \(error id [^)]+\)$/, ''),
      });
    }
    expect(answers[0]!.status).toBe(500);
    expect(answers[0]!.message).toContain(`model '${WITHOUT_TOKENIZER}' has no tokenizer`);
    expect(answers[1]).toEqual(answers[0]);
  });
});
