// A new user's first hour (issue 25): `npm start`, then the official OpenAI SDK. A conversation
// whose turns are sent back to back without a session id, as agents and scripts send them, finds
// its previous turn's KV on the node that ran it (the scheduler's expected holdings), and
// usage.prompt_tokens_details.cached_tokens says so, streamed or not, over REST and gRPC; a long
// streamed call can be aborted and followed by another.
import { randomUUID } from 'node:crypto';
import { credentials, Metadata, type Client } from '@grpc/grpc-js';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { loadGrpcServices } from '@mnemo/proto';
import { scrape, waitFor } from './cluster.js';
import { startNpmCluster, type NpmStartCluster } from './npm-start.cluster.js';

/** What every turn of a conversation reported. */
interface Turn {
  readonly turn: number;
  readonly streamed: boolean;
  readonly prompt: number;
  readonly cached: number;
  readonly completion: number;
}

// About 60 words a turn, English, different every turn.
const SENTENCES = [
  'The harbour was quiet this morning, and the boats rocked gently against the old stone wall.',
  'My grandmother kept a garden of roses, beans and tall yellow sunflowers behind her kitchen.',
  'We talked for hours about books we loved as children and the places they made us dream of.',
  'A cold wind came down from the hills just as the market opened and the bakers lit their ovens.',
  'Nobody in the village could remember a winter as long as the one that followed the great flood.',
  'She wrote letters every week to a friend she had met only once, on a train going north.',
  'The old clock in the hall stopped at midnight, and nobody has wound it since that night.',
  'He learned to play the piano late in life and practised every evening after supper.',
  'There is a small library at the end of our street where the light is always warm and kind.',
  'When the rain finally stopped, the children ran outside to look for frogs in the puddles.',
  'Tell me what you think a good friend should do when the news is hard to hear.',
  'I would like to know more about the history of the lighthouse and the family who kept it.',
];

function userTurn(turn: number, nonce: string): string {
  const words: string[] = turn === 1 ? [`(conversation ${nonce})`] : [];
  for (let i = 0; words.join(' ').split(/\s+/).length < 58; i++) words.push(SENTENCES[(turn * 5 + i * 7) % SENTENCES.length]!);
  return words.join(' ');
}

describe('the OpenAI SDK against npm start (issue 25)', () => {
  let cluster: NpmStartCluster;
  let client: OpenAI;
  let defaultModel: string;

  beforeAll(async () => {
    cluster = await startNpmCluster({ only: ['gateway', 'scheduler', 'node-a', 'node-b'] });
    client = new OpenAI({ baseURL: `${cluster.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
    // The default model is the one listed first (MNEMO_DEFAULT_MODEL).
    defaultModel = (await client.models.list()).data[0]!.id;
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  /** Sends `turns` user turns, each as soon as the last answer ended, no session id; odd turns streamed. */
  async function converse(
    model: string,
    turns: number,
    maxTokens: number,
    text: (turn: number) => string,
  ): Promise<{ turns: Turn[]; messages: ChatCompletionMessageParam[] }> {
    const messages: ChatCompletionMessageParam[] = [];
    const out: Turn[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      messages.push({ role: 'user', content: text(turn) });
      const body = { model, messages, max_tokens: maxTokens, temperature: 0.7, seed: turn };
      const streamed = turn % 2 === 1;
      let reply = '';
      let usage: OpenAI.CompletionUsage | undefined;
      if (streamed) {
        const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
        for await (const chunk of stream) {
          reply += chunk.choices[0]?.delta?.content ?? '';
          usage = chunk.usage ?? usage;
        }
      } else {
        const r = await client.chat.completions.create(body);
        reply = r.choices[0]!.message.content ?? '';
        usage = r.usage;
      }
      expect(usage).toBeDefined();
      out.push({
        turn,
        streamed,
        prompt: usage!.prompt_tokens,
        cached: usage!.prompt_tokens_details?.cached_tokens ?? -1,
        completion: usage!.completion_tokens,
      });
      messages.push({ role: 'assistant', content: reply });
    }
    return { turns: out, messages };
  }

  /** A counter summed over services (absent counts as 0). */
  const sumOver = async (services: readonly string[], sample: string) => {
    let n = 0;
    for (const s of services) n += (await scrape(cluster.metricsPorts.get(s)!, sample)) ?? 0;
    return n;
  };

  /** Turns from the second on whose cached tokens fall short of 90% of the previous turn's prompt. */
  const shortOfReuse = (turns: readonly Turn[]) => turns.slice(1).filter((t, i) => t.cached < 0.9 * turns[i]!.prompt);

  /** Cached tokens come in whole 16-token blocks, and the last prompt token is always computed. */
  const inexact = (turns: readonly Turn[]) => turns.filter((t) => t.cached % 16 !== 0 || t.cached > t.prompt - 1 || t.cached < 0);

  it(
    'a 10-turn conversation of about 60 words a turn on the default ' +
      'model, back to back without a session id, reuses each previous turn',
    async () => {
      const nonce = randomUUID().slice(0, 8);
      expect(userTurn(3, nonce).split(/\s+/).length).toBeGreaterThanOrEqual(55);
      const { turns, messages } = await converse(defaultModel, 10, 32, (t) => userTurn(t, nonce));
      expect(turns.map((t) => t.completion > 0)).toEqual(Array(10).fill(true));
      expect(inexact(turns)).toEqual([]);
      expect(shortOfReuse(turns)).toEqual([]);

      // gRPC Infer of the next turn reports the same accounting.
      const Gateway = loadGrpcServices().clients.Gateway;
      const grpc = new Gateway(`127.0.0.1:${cluster.grpcPort}`, credentials.createInsecure()) as unknown as Client & {
        Infer: (req: object, md: Metadata) => NodeJS.EventEmitter;
      };
      const chunks: Array<{ usage?: { promptTokens: number; cachedTokens: number } }> = [];
      try {
        await new Promise<void>((resolve, reject) => {
          const call = grpc.Infer(
            { model: defaultModel, messages: [...messages, { role: 'user', content: userTurn(11, nonce) }], maxTokens: 8 },
            new Metadata(),
          );
          call.on('data', (c: (typeof chunks)[number]) => chunks.push(c));
          call.on('error', reject);
          call.on('end', resolve);
        });
      } finally {
        grpc.close();
      }
      const usage = chunks.at(-1)!.usage!;
      expect(usage.cachedTokens).toBeGreaterThanOrEqual(0.9 * turns.at(-1)!.prompt);

      // The scheduler found each follow-up through what it had just routed.
      const hits = await scrape(
        cluster.metricsPorts.get('scheduler')!,
        'mnemo_scheduler_kv_directory_expected_lookups_total{outcome="hit"}',
      );
      expect(hits).toBeGreaterThanOrEqual(10);
    },
    180_000,
  );

  it('mnemo-tiny, the reported case: four turns back to back, the first with no whole chunk reused by the second', async () => {
    const nonce = randomUUID().slice(0, 8);
    const { turns } = await converse('mnemo-tiny', 4, 24, (t) => userTurn(t, nonce));
    expect(turns[0]!.prompt).toBeLessThan(512);
    expect(inexact(turns)).toEqual([]);
    expect(shortOfReuse(turns)).toEqual([]);
  }, 120_000);

  /** A streamed call of `model` to its end: the text, the finish reason and the usage. */
  async function streamToEnd(model: string, messages: ChatCompletionMessageParam[], maxTokens: number) {
    const stream = await client.chat.completions.create({
      model,
      messages,
      max_tokens: maxTokens,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    return { text, usage, finish };
  }

  it('a streamed call with max_tokens 512 succeeds, can be aborted, and a new one succeeds after it', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tell me a long story about the sea.' }];
    // The default model's context holds 512 new tokens after the prompt (the reported 400 was its 512-token context).
    const whole = await streamToEnd(defaultModel, messages, 512);
    expect(['stop', 'length']).toContain(whole.finish);
    expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(512);
    expect(whole.text.length).toBeGreaterThan(0);

    // The trained model ends most replies within a few dozen tokens, sooner than an abort reaches the
    // node; ignore_eos (vLLM's extension, passed as the SDK passes extra fields) keeps it going. 512
    // tokens of this small model take well under a second, which a loaded machine's cancel can lose to,
    // so the aborted stream asks for most of the 4,096-token context.
    const abort = new AbortController();
    const longBody = { model: defaultModel, messages, max_tokens: 3_500, stream: true as const, ignore_eos: true };
    const first = await client.chat.completions.create(longBody, { signal: abort.signal });
    const cancelled = () => sumOver(['node-a', 'node-b'], 'mnemo_node_cancelled_total{reason="client"}');
    const cancelledBefore = await cancelled();
    let pieces = 0;
    let finished = false;
    for await (const chunk of first) {
      if (chunk.choices[0]?.delta?.content) pieces++;
      finished ||= Boolean(chunk.choices[0]?.finish_reason);
      if (pieces === 3) {
        abort.abort();
        break;
      }
    }
    expect({ pieces, finished }).toEqual({ pieces: 3, finished: false });
    // The gateway saw the client go and the node stopped generating for it.
    await waitFor(async () => (await cancelled()) > cancelledBefore, 10_000, 'the node to cancel the aborted stream');

    const after = await streamToEnd(defaultModel, messages, 512);
    expect(['stop', 'length']).toContain(after.finish);
    expect(after.usage!.completion_tokens).toBeGreaterThan(0);
    expect(after.text.length).toBeGreaterThan(0);
  }, 120_000);
});
