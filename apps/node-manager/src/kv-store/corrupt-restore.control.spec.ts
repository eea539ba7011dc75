// The control for the chaos run's corruption fault (issue 39): KV corrupted on the SSD pool and
// restored with the CRC32C check switched off (the fault-injection setting `faultSkipRestoreCrc`,
// never for production) changes what the model computes; with the check on, the same corruption
// is detected, counted, the replica dropped, and the request — planned again as a node does after
// DataLoss — answers exactly as a clean run. The default model gives nearly the same greedy
// answer to many prompts, so the comparison is of per-step logit digests, not only of tokens.
// Reference engine, CPU backend, real pool devices and files.
import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { chunkKeys } from '@mnemo/kv-core';
import { ReferenceEngine, type PrefillInput } from '@mnemo/engine';
import { transfer } from '@mnemo/native-cuda';
import { GREEDY, MODEL, storedPrompt, toks } from '../../test/conversation.fixture.js';
import { openStoreRig, type StoreRig } from '../../test/kv-store.fixture.js';
import type { KvStore } from './kv.store.js';

const SALT = 't';
const STEPS = 8;

/** Records a digest of the logits behind every sampled token of the engine (prefill and decode steps). */
function digestsOf(engine: ReferenceEngine): string[] {
  const out: string[] = [];
  const sample = engine.sample.bind(engine);
  jest.spyOn(engine, 'sample').mockImplementation((seqId, logits) => {
    out.push(
      createHash('sha256')
        .update(new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength))
        .digest('hex'),
    );
    return sample(seqId, logits);
  });
  return out;
}

/**
 * Prefills (restoring from `store` when given) and decodes greedily; the tokens and restored count,
 * or undefined when the prefill gave the sequence no output (its restore failed, as a node sees it).
 */
async function converse(engine: ReferenceEngine, seqId: string, tokens: number[], n: number, store?: KvStore) {
  const prompt = storedPrompt(tokens, SALT);
  const input: PrefillInput = {
    seqId,
    model: MODEL,
    tokens,
    sampling: GREEDY,
    cacheSalt: SALT,
    restore: store ? (d) => store.restorePlan(prompt, d, seqId) : undefined,
  };
  const [first] = await engine.prefill([input]);
  if (!first) return undefined;
  const out = [first!.token];
  while (out.length < n) out.push((await engine.decode([seqId]))[0]!.token);
  engine.release(seqId);
  return { out, restored: first!.restoredTokens ?? 0 };
}

describe('control: corrupted KV restored without its CRC check changes the output; with it, never', () => {
  const turn1 = toks(600, 1);
  let turn2: number[];
  let clean: { out: number[]; digests: string[] };
  let rig: StoreRig;
  let engine: ReferenceEngine;
  let store: KvStore;

  beforeAll(async () => {
    // Turn 1's answer, then turn 2 computed from scratch with no cache: the clean answer.
    const fresh = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 256 });
    const first = (await converse(fresh, 't1', turn1, 20))!;
    turn2 = [...turn1, ...first.out, ...toks(40, 5)];
    const digests = digestsOf(fresh);
    const { out } = (await converse(fresh, 'clean', turn2, STEPS))!;
    clean = { out, digests: [...digests] };
    await fresh.close();
  });

  /** Turn 1 through a small device cache and a store, pushed off the device by a filler: its chunks left on the SSD pool. */
  async function setUp(faultSkipRestoreCrc: boolean): Promise<void> {
    rig = await openStoreRig(
      'mnemo-corrupt-control-',
      { models: [MODEL], kvBlocks: 56 },
      { hostBytes: 768 * 1024, settings: { faultSkipRestoreCrc } },
    );
    ({ engine, store } = rig);
    await converse(engine, 't1', turn1, 20, store);
    await store.settle();
    await converse(engine, 'filler', toks(760, 9), 2, store);
    await store.settle();
  }

  afterEach(() => rig.close());

  /**
   * Overwrites a sector of layer 1 of a chunk of turn 1 held only on SSD and wholly past what the
   * device kept (its first 128 tokens): one turn 2 restores. Returns its key.
   */
  async function corruptSsdOnlyChunk(): Promise<string> {
    const m = store.tiers.model(MODEL);
    const key = chunkKeys(MODEL, SALT, turn1)
      .slice(1)
      .find((k) => m.table.holdsChunk(k, 'ssd') && !m.table.get(k, 1, 'mem'));
    expect(key).toBeDefined();
    const loc = m.table.get(key!, 1, 'ssd')!;
    await transfer(
      [new Uint8Array(4096).fill(0x5a), store.tiers.device(loc.deviceIndex).device],
      Float64Array.of(0, 0, 1, loc.offset, 4096),
    );
    return key!;
  }

  it('with the CRC check off (fault injection), the corrupted KV is used and the logits differ from the clean run', async () => {
    await setUp(true);
    await corruptSsdOnlyChunk();
    const digests = digestsOf(engine);
    const got = (await converse(engine, 't2', turn2, STEPS, store))!;
    expect(got.restored).toBeGreaterThan(0);
    expect(store.tiers.counters.crcFailures).toBe(0);
    expect(digests).toHaveLength(STEPS);
    // Every step computed over the corrupted rows: each logit vector differs from the clean one.
    digests.forEach((d, i) => expect(d).not.toBe(clean.digests[i]));
  });

  it(
    'with the CRC check on, the same corruption fails the restore ' + '(counted, dropped); planned again, the answer is the clean one',
    async () => {
      await setUp(false);
      const key = await corruptSsdOnlyChunk();
      // The restore fails with DataLoss inside the pass: the engine gives the sequence no output.
      expect(await converse(engine, 't2', turn2, STEPS, store)).toBeUndefined();
      expect(store.tiers.counters.crcFailures).toBe(1);
      expect(store.tiers.model(MODEL).table.get(key, 1, 'ssd')).toBeUndefined();
      // As the node does after DataLoss: the request is planned again and recomputes what is gone.
      const digests = digestsOf(engine);
      const again = (await converse(engine, 't2', turn2, STEPS, store))!;
      expect(again.out).toEqual(clean.out);
      expect(digests).toEqual(clean.digests);
    },
  );
});
