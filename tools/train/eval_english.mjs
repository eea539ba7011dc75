// Does a trained model write English? Replies to 20 fixed chat prompts (one seed each,
// temperature 0.7) from OUR engine (the reference engine on the CPU backend, the same code a
// node runs), and the share of their distinct words (letters, inner apostrophes; longer than
// one letter; case-folded) found in wamerican's /usr/share/dict/words. Then one 10-turn chat
// with ~60-word user turns (about 2,000 tokens by the last turn) to see the late replies too.
//
//   node tools/train/eval_english.mjs [--model fortune-base] [--out tools/train/EVAL.json]
//
// Needs the built engine (`npx tsc -b`) and the Debian package wamerican.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ReferenceEngine, applyChatTemplate, loadHfModel, loadTokenizer } from '@mnemo/engine';
import { createKernelBackend } from '@mnemo/native-cuda';

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: { model: { type: 'string', default: 'fortune-base' }, out: { type: 'string', default: join(here, 'EVAL.json') } },
});
const DICT = '/usr/share/dict/words';
const TEMPERATURE = 0.7;
const MAX_TOKENS = 96;
const PROMPTS = [
  'Hello! How are you today?',
  'Tell me something wise.',
  'What is the meaning of life?',
  'Can you give me some advice about work?',
  'Tell me a joke about computers.',
  'What do you think about love?',
  'I feel tired today. Any thoughts?',
  'What should I cook for dinner?',
  'Tell me a short story.',
  'Who are you?',
  'What is the best way to learn a new language?',
  'Say something about the weather.',
  'Why do people like music?',
  'What is your favourite book?',
  'Give me a quote about science.',
  'How do I become a better programmer?',
  'What happens after we die?',
  'Tell me about cats.',
  'Is money important?',
  'What did you do last weekend?',
];
// User turns of the long chat: about 60 words each.
const LONG_TURNS = [
  'I have been thinking about my job a lot lately. I work long hours at a desk, answering email and sitting in meetings, and at the end of the week I wonder what I actually made. My grandfather built houses with his hands. Is office work less real than that, or am I just tired and looking for something to complain about?',
  'That is an interesting way to put it. My friend says the secret is to find work you would do for free, but I think that is easy to say when you have money in the bank. Most people work because they must eat. What would you say to someone who has no choice about the job they have?',
  'Maybe you are right. Let me change the subject. I started reading old books again, the kind my teachers made me read in school and I hated then. Now I find them funny and wise. Why do you think we understand some books only when we are older, after we have made a few mistakes of our own?',
  'I also tried to learn to cook this year. My first bread was as hard as a rock, the second one was raw inside, and the third one was good enough that my neighbour asked for the recipe. Is there a lesson in that about patience, or is it just that I finally read the instructions properly?',
  'My daughter asked me yesterday why the sky is blue and I gave her a long answer about light and air. She listened politely and then asked why the grass is green. Children never stop asking questions. When do you think people stop asking why, and is it a good thing or a sad thing when they do?',
  'We have a cat at home who thinks he owns the place. He sleeps on my keyboard, knocks cups off the table, and then looks at me as if I were the one who did something wrong. Sometimes I think animals understand life better than we do. Do you believe that, or is it just a story we tell ourselves?',
  'Last night I could not sleep, so I went outside and looked at the stars for an hour. It made all my worries feel very small, which was a strange comfort. Some people find the size of the universe frightening. I found it peaceful. Why do you think the same sky makes some people afraid and others calm?',
  'A colleague of mine retired last month after forty years at the same company. At his party he said the best thing he ever did was to take every holiday he was given. Nobody laughed, because everyone knew he meant it. What do you think people regret most when they look back on their working lives?',
  'I want to write a letter to an old friend I have not spoken to in ten years. We did not fight, we simply drifted apart when we moved to different cities. I am afraid it will feel awkward after so long. Should I write anyway, and what should the first sentence say to make it easy for both of us?',
  'Thank you for talking with me tonight. It has been a strange and pleasant conversation, and I feel better than I did an hour ago. Before I go to bed, tell me one last thing: if you could give a single piece of advice to everyone in the world, something short enough to remember, what would it be?',
];

if (!existsSync(DICT)) throw new Error(`${DICT} missing: apt-get install wamerican`);
const dict = new Set(
  readFileSync(DICT, 'utf8')
    .split('\n')
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean),
);
const dir = join(here, 'models', args.model);
const weights = loadHfModel(dir, args.model);
const tok = loadTokenizer(dir);
const imEnd = tok.specialTokenId('<|im_end|>');
const engine = new ReferenceEngine(createKernelBackend('cpu'), [weights], Math.ceil(weights.config.maxContext / 16) + 8);

/** One reply (stops at <|im_end|> or MAX_TOKENS); returns its text and the prompt's length. */
async function reply(messages, seed) {
  const prompt = applyChatTemplate(tok, messages);
  const id = `s${seed}-${messages.length}`;
  engine.openSequence(id, args.model, { temperature: TEMPERATURE, topP: 1, seed });
  try {
    let [r] = await engine.step([{ seqId: id, tokens: prompt }]);
    const out = [];
    while (out.length < MAX_TOKENS) {
      const t = engine.sample(id, r.logits);
      if (t === imEnd) break;
      out.push(t);
      [r] = await engine.step([{ seqId: id, tokens: [t] }]);
    }
    return { text: tok.decode(out), promptTokens: prompt.length, replyTokens: out.length };
  } finally {
    engine.release(id);
  }
}

function words(texts) {
  const all = new Set();
  for (const t of texts) for (const w of t.match(/[A-Za-z]+(?:'[A-Za-z]+)*/g) ?? []) if (w.length > 1) all.add(w.toLowerCase());
  const found = [...all].filter((w) => dict.has(w));
  const missing = [...all].filter((w) => !dict.has(w)).sort();
  return {
    distinct: all.size,
    inDictionary: found.length,
    fraction: all.size ? Number((found.length / all.size).toFixed(4)) : 0,
    notInDictionary: missing,
  };
}

const t0 = Date.now();
const replies = [];
for (const [i, p] of PROMPTS.entries()) {
  const r = await reply([{ role: 'user', content: p }], i);
  replies.push({ seed: i, prompt: p, reply: r.text });
  process.stdout.write(`[${i}] ${p}\n    ${r.text.replace(/\n/g, '\n    ')}\n`);
}
const single = words(replies.map((r) => r.reply));

const chat = [];
const turns = [];
for (const [i, u] of LONG_TURNS.entries()) {
  chat.push({ role: 'user', content: u });
  const r = await reply(chat, 100 + i);
  chat.push({ role: 'assistant', content: r.text });
  turns.push({ turn: i + 1, promptTokens: r.promptTokens, reply: r.text });
  process.stdout.write(`[turn ${i + 1}, ${r.promptTokens} prompt tokens] ${r.text.replace(/\n/g, ' ')}\n`);
}
const late = words(turns.slice(7).map((t) => t.reply));
const result = {
  model: args.model,
  engine: 'reference engine, cpu backend (libs/engine), weights as stored (bf16)',
  temperature: TEMPERATURE,
  max_tokens: MAX_TOKENS,
  dictionary: `${DICT} (wamerican), ${dict.size} case-folded entries`,
  words: "distinct [A-Za-z]+('[A-Za-z]+)* longer than one letter, case-folded, pooled over the replies",
  prompts: PROMPTS.length,
  english_fraction: single.fraction,
  distinct_words: single.distinct,
  not_in_dictionary: single.notInDictionary,
  replies,
  long_chat: {
    turns: turns.length,
    last_prompt_tokens: turns.at(-1).promptTokens,
    late_turns_english_fraction: late.fraction,
    late_turns_distinct_words: late.distinct,
    turns,
  },
  seconds: Math.round((Date.now() - t0) / 1000),
};
await engine.close();
writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
process.stdout.write(
  `\n${args.model}: ${(100 * single.fraction).toFixed(1)}% of ${single.distinct} distinct words in the dictionary over ${PROMPTS.length} prompts; ` +
    `long chat: ${turns.at(-1).promptTokens} prompt tokens at turn ${turns.length}, late turns ${(100 * late.fraction).toFixed(1)}%; wrote ${args.out}\n`,
);
