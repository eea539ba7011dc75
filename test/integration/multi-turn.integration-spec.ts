// KV store issue, device tier: a conversation's next turn, built by the chat template, reproduces
// the earlier turn's prompt and reply token ids as a prefix, and the node serves that prefix from
// its device prefix cache (usage.prompt_tokens_details.cached_tokens) — with the same answer as a
// fresh computation on the reference engine.
import { applyChatTemplate, ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { gatewayCluster, referenceNodeEnv } from './cluster.js';

const MODEL = 'mnemo-tiny';
const tok = new ByteTokenizer();

interface ChatBody {
  choices: Array<{ message: { content: string }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
}
interface TextBody {
  choices: Array<{ text: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
}

async function post<T>(base: string, path: string, body: object): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const wholeBlocks = (tokens: number) => Math.floor(tokens / 16) * 16;

describe('multi-turn conversations hit the device prefix cache', () => {
  describe('through the chat template (sim engine: printable replies that re-tokenize exactly)', () => {
    const gw = gatewayCluster({
      nodes: 1,
      nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL },
    });

    it('turn 2 starts with turn 1’s prompt and reply token ids, and that prefix comes from cache', async () => {
      const turn1 = [{ role: 'user' as const, content: 'Tell me where a conversation keeps its KV cache between turns.' }];
      const r1 = await post<ChatBody>(gw.base, '/v1/chat/completions', { model: MODEL, messages: turn1, max_tokens: 40, temperature: 0 });
      expect(r1.usage.prompt_tokens_details.cached_tokens).toBe(0);
      const reply = r1.choices[0]!.message.content;
      const p1 = applyChatTemplate(tok, turn1);
      const replyIds = tok.encode(reply);
      expect(replyIds).toHaveLength(r1.usage.completion_tokens - (r1.choices[0]!.finish_reason === 'stop' ? 1 : 0));

      const turn2 = [...turn1, { role: 'assistant' as const, content: reply }, { role: 'user' as const, content: 'And after a restart?' }];
      const p2 = applyChatTemplate(tok, turn2);
      // The property the cache relies on, tested exactly:
      expect(p2.slice(0, p1.length + replyIds.length)).toEqual([...p1, ...replyIds]);

      const r2 = await post<ChatBody>(gw.base, '/v1/chat/completions', { model: MODEL, messages: turn2, max_tokens: 8, temperature: 0 });
      expect(r2.usage.prompt_tokens).toBe(p2.length);
      // The node kept prompt + every generated token but the last (never written to KV) in whole blocks.
      const held = p1.length + r1.usage.completion_tokens - 1;
      expect(r2.usage.prompt_tokens_details.cached_tokens).toBe(wholeBlocks(Math.min(held, p2.length - 1)));
      expect(r2.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(p1.length - 16);
    });
  });

  describe('on the reference engine', () => {
    const gw = gatewayCluster({
      nodes: 1,
      nodeEnv: referenceNodeEnv(MODEL, 64),
    });

    it('a prompt extending an earlier one is served from cache with the answer a fresh computation gives', async () => {
      const history = Array.from({ length: 70 }, (_, i) => (i * 29 + 3) % 250);
      const extended = [...history, ...Array.from({ length: 30 }, (_, i) => (i * 13 + 7) % 250)];
      const first = await post<TextBody>(gw.base, '/v1/completions', { model: MODEL, prompt: history, max_tokens: 4, temperature: 0 });
      expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
      const second = await post<TextBody>(gw.base, '/v1/completions', { model: MODEL, prompt: extended, max_tokens: 6, temperature: 0 });
      expect(second.usage.prompt_tokens_details.cached_tokens).toBe(wholeBlocks(history.length));

      const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 64 });
      try {
        const sampling = { temperature: 0, topP: 1, seed: 0 };
        const tokens = [(await engine.prefill([{ seqId: 'fresh', model: MODEL, tokens: extended, sampling }]))[0]!.token];
        while (tokens.length < second.usage.completion_tokens) tokens.push((await engine.decode(['fresh']))[0]!.token);
        expect(second.choices[0]!.text).toBe(tok.decode(tokens.filter((t) => t !== tok.eosTokenId)));
      } finally {
        await engine.close();
      }
    });
  });
});
