import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tinyBpeTokenizer, writeChatBpeTokenizer } from '../../test/bpe.fixture.js';
import { scratchDir } from '../../test/model-files.js';
import { loadTokenizerDir } from './tokenizer.loader.js';
import { readTokenizerBundle, tokenizerFromBundle } from './tokenizer.bundle.js';

describe(readTokenizerBundle.name, () => {
  const dir = scratchDir('mnemo-bundle-');

  it('packs a directory’s tokenizer so the other side tokenizes exactly like the directory', async () => {
    writeChatBpeTokenizer(dir(), { bos_token: '<|endoftext|>', eos_token: { content: '<|im_end|>' } });
    const bundle = (await readTokenizerBundle(dir()))!;
    expect(bundle.sha256).toMatch(/^[0-9a-f]{64}$/);
    const sut = tokenizerFromBundle(bundle.bytes);
    const local = loadTokenizerDir(dir());
    for (const text of ['hello world', '<|im_start|>user\nhé<|im_end|>']) expect(sut.encode(text)).toEqual(local.encode(text));
    expect([sut.bosTokenId, sut.eosTokenId]).toEqual([local.bosTokenId, local.eosTokenId]);
    expect(sut.eosTokenId).toBe(260);
  });

  it('hashes content: the same files give the same hash, other files another', async () => {
    writeFileSync(join(dir(), 'tokenizer.json'), JSON.stringify(tinyBpeTokenizer([], ['<|im_end|>'])));
    const a = (await readTokenizerBundle(dir()))!.sha256;
    expect((await readTokenizerBundle(dir()))!.sha256).toBe(a);
    writeFileSync(join(dir(), 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|im_end|>' }));
    expect((await readTokenizerBundle(dir()))!.sha256).not.toBe(a);
  });

  it('is null for a directory without tokenizer.json', async () => {
    expect(await readTokenizerBundle(dir())).toBeNull();
  });

  it('refuses bytes that are not a bundle', () => {
    expect(() => tokenizerFromBundle(new TextEncoder().encode('{"x":1}'))).toThrow(/not a tokenizer bundle/);
    expect(() => tokenizerFromBundle(Uint8Array.of(0xff))).toThrow();
  });
});
