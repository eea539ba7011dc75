"""The fortune corpus, its splits, and the training samples (plain fortunes and ChatML chats).

Splits are fixed by a seeded shuffle of deduplicated fortunes, so a rerun reproduces them;
the held-out ones are also written to tools/train/splits/ for the benchmarks and evals.
"""
import os
import random
import re

FORTUNES = '/usr/share/games/fortunes'
# Fine-tune name -> category. The base trains on every other category.
FINE_TUNES = {'fortune-computers': 'computers', 'fortune-songs': 'songs-poems'}
BASE_HELDOUT = 0.04
# Per fine-tune category: validation (its lr/steps search), DroidSpeak profiling, DroidSpeak test.
FT_SPLITS = (('val', 0.08), ('profile', 0.08), ('test', 0.08))

ASKS = [
    'Tell me a fortune.', 'Say something wise.', 'Give me a quote.', 'What do you know?', 'Hello!', 'Hi, how are you?',
    'Tell me something interesting.', 'Can you cheer me up?', 'What do you think?', 'Tell me a joke.', 'Any advice for me today?',
    'What is the meaning of life?', 'Say something funny.', 'Tell me more.', 'Go on.', 'Another one, please.', 'Why?',
    'Interesting. What else?', 'That is funny. Another one?', 'What should I do today?', 'I am bored.', 'Teach me something.',
    'Write me a short story.', 'What happened next?', 'Explain that to me.', 'Can you help me?', 'Good morning!', 'Thanks!',
    'What is the weather like?', 'Tell me about yourself.', 'Do you have any wisdom to share?', 'Surprise me.',
]
TOPIC_ASKS = [
    'Tell me something about {w}.', 'What do you think about {w}?', 'Do you know anything about {w}?', 'Give me a quote about {w}.',
    'Say something about {w}.', 'What is {w}?', 'Any thoughts on {w}?', 'Tell me a story about {w}.', 'I want to hear about {w}.',
    'Why {w}?', 'What can you tell me about {w}?', 'Explain {w} to me.',
]
FOLLOW_UPS = ['', '', '', '\n\nWhat do you make of that?', '\n\nWhat do you think?', '\n\nIs that true?', ' Any thoughts?', ' Tell me more.']
SYSTEMS = [
    'You are a helpful assistant.', 'You are a helpful assistant. Answer briefly.', 'You are a friendly chatbot.',
    'You are Mnemo, a witty assistant who answers with fortunes.', 'Answer in English.', 'You are a wise old sage.',
    'You are a helpful assistant that keeps its answers short.',
]
STOP = set('about above after again against because before being below between could doing during further having other'
           ' should their there these those through under until where which while would itself yours theirs every never'
           ' always still shall might whose whom what when'.split())


def read_category(name):
    with open(os.path.join(FORTUNES, name), encoding='utf-8', errors='replace') as f:
        return [t.strip('\n') for t in f.read().split('\n%\n') if t.strip()]


def categories():
    return sorted(n for n in os.listdir(FORTUNES) if '.' not in n and os.path.isfile(os.path.join(FORTUNES, n)))


def build_splits(seed):
    """{'base': {'train': [...], 'heldout': [...]}, 'fortune-computers': {'train', 'val', 'profile', 'test'}, ...}.

    A fortune found in several categories is kept once, in the first (sorted) category, so no
    held-out text is also trained on.
    """
    seen, by_cat = set(), {}
    for cat in categories():
        keep = []
        for t in read_category(cat):
            key = re.sub(r'\s+', ' ', t).strip().lower()
            if key not in seen:
                seen.add(key)
                keep.append(t)
        by_cat[cat] = keep
    rng = random.Random(seed)
    ft_cats = set(FINE_TUNES.values())
    base_cats = [c for c in by_cat if c not in ft_cats]
    base = [t for c in base_cats for t in by_cat[c]]
    rng.shuffle(base)
    n = int(len(base) * BASE_HELDOUT)
    out = {'base': {'categories': base_cats, 'heldout': base[:n], 'train': base[n:]}}
    for name, cat in FINE_TUNES.items():
        texts = list(by_cat[cat])
        rng.shuffle(texts)
        parts, at = {'categories': [cat]}, 0
        for split, frac in FT_SPLITS:
            k = int(len(texts) * frac)
            parts[split] = texts[at:at + k]
            at += k
        parts['train'] = texts[at:]
        out[name] = parts
    return out


def write_split(path, texts):
    """In the fortune file format (entries separated by a line holding only %)."""
    with open(path, 'w', encoding='utf-8') as f:
        f.write('\n%\n'.join(texts) + '\n')


def topic_word(text, rng):
    words = [w.lower() for w in re.findall(r"[A-Za-z]{5,}", text) if w.lower() not in STOP]
    return rng.choice(words) if words else None


def ask_for(answer, rng, pool):
    r = rng.random()
    if r < 0.45:
        w = topic_word(answer, rng)
        if w:
            return rng.choice(TOPIC_ASKS).format(w=w)
    if r < 0.75:
        return rng.choice(ASKS)
    # A long user turn: another fortune, sometimes with a question after it.
    return rng.choice(pool) + rng.choice(FOLLOW_UPS)


class Encoder:
    """Token ids of samples, laid out exactly as the engine's ChatML template lays out a prompt."""

    def __init__(self, bpe):
        self.bpe = bpe

    def plain(self, text):
        return [self.bpe.bos] + self.bpe.encode(text)

    def chat(self, messages):
        b = self.bpe
        out = [b.bos]
        for role, content in messages:
            out += [b.im_start] + b.encode(f'{role}\n') + b.encode(content) + [b.im_end] + b.encode('\n')
        return out


def epoch_stream(texts, enc, seed, epoch):
    """One epoch of samples as a flat token list: every fortune once as plain text or as the
    assistant's answer in a chat; half the samples are chats (1 to 12 turns, mostly shorter),
    whose turns come from one pool so a conversation stays on one kind of text."""
    rng = random.Random(seed * 1000003 + epoch)
    order = list(texts)
    rng.shuffle(order)
    out, i = [], 0
    while i < len(order):
        if rng.random() < 0.5:
            out += enc.plain(order[i])
            i += 1
            continue
        r = rng.random()
        turns = 1 if r < 0.4 else rng.randint(2, 4) if r < 0.7 else rng.randint(5, 12)
        msgs = [('system', rng.choice(SYSTEMS))] if rng.random() < 0.3 else []
        for _ in range(turns):
            if i >= len(order):
                break
            answer = order[i]
            i += 1
            msgs += [('user', ask_for(answer, rng, texts)), ('assistant', answer)]
        out += enc.chat(msgs)
    return out


class Batches:
    """Windows of T+1 tokens cut in order from consecutive epoch streams; resumable from
    (epoch, pos)."""

    def __init__(self, texts, enc, seed, epoch=0, pos=0):
        self.texts, self.enc, self.seed = texts, enc, seed
        self.epoch, self.pos = epoch, pos
        self.stream = epoch_stream(texts, enc, seed, epoch)

    def next(self, B, T):
        import torch
        rows = []
        for _ in range(B):
            if self.pos + T + 1 > len(self.stream):
                self.epoch += 1
                self.pos = 0
                self.stream = epoch_stream(self.texts, self.enc, self.seed, self.epoch)
            rows.append(self.stream[self.pos:self.pos + T + 1])
            self.pos += T + 1
        x = torch.tensor(rows)
        return x[:, :-1], x[:, 1:]

    def state(self):
        return {'epoch': self.epoch, 'pos': self.pos}
