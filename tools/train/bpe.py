"""Byte-level BPE (GPT-2 style) for the fortune models: a trainer, an encoder, and the Hugging
Face tokenizer.json writer. No `tokenizers` package here (no PyPI), so this is written out.

The split regex is GPT-2's, the one a `ByteLevel` pre-tokenizer with `use_regex: true` applies,
and which libs/engine/src/tokenizer/pretokenizer.regex.ts applies too; merges apply by rank,
so the engine's encoding of any text equals `Bpe.encode` here (a spec checks it on a fixture).
"""
import collections
import heapq
import json

import regex

GPT2_SPLIT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
SPECIALS = ('<|endoftext|>', '<|im_start|>', '<|im_end|>')


def bytes_to_unicode():
    """GPT-2's printable stand-in character for each byte (the tokenizer.json vocab alphabet)."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def pieces(text):
    return GPT2_SPLIT.findall(text)


def train_bpe(texts, vocab_size, log=print):
    """Learns vocab_size - 256 - len(SPECIALS) merges over the pre-tokenized words of `texts`.

    Ids: 0-255 the bytes, then the specials, then merges in the order learned. Incremental:
    pair counts and a pair -> words index are updated only for the words a merge touches.
    """
    counts = collections.Counter(p for t in texts for p in pieces(t))
    words = [list(p.encode('utf-8')) for p in counts]
    freqs = list(counts.values())
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for wi, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freqs[wi]
            where[(a, b)].add(wi)
    # A lazy max-heap of (-count, a, b): an entry is stale when its count is no longer current.
    heap = [(-c, a, b) for (a, b), c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    next_id = 256 + len(SPECIALS)
    while next_id < vocab_size and heap:
        neg, a0, b0 = heapq.heappop(heap)
        best = (a0, b0)
        if pair_count.get(best, 0) != -neg:
            continue
        # Highest count, ties to the smallest pair (the heap's order), so the result never
        # depends on dict order.
        if -neg < 2:
            break
        merges.append(best)
        touched = set()
        for wi in list(where[best]):
            w, f = words[wi], freqs[wi]
            for a, b in zip(w, w[1:]):
                pair_count[(a, b)] -= f
                touched.add((a, b))
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(next_id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for a, b in zip(out, out[1:]):
                pair_count[(a, b)] += f
                where[(a, b)].add(wi)
                touched.add((a, b))
        for p in touched:
            c = pair_count[p]
            if c <= 0:
                del pair_count[p]
            else:
                heapq.heappush(heap, (-c, p[0], p[1]))
        del where[best]
        next_id += 1
        if len(merges) % 500 == 0:
            log(f'  bpe: {len(merges)} merges')
    return merges


class Bpe:
    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]
        self.ranks = {m: i for i, m in enumerate(self.merges)}
        self.first = 256 + len(SPECIALS)
        self.special = {s: 256 + i for i, s in enumerate(SPECIALS)}
        self.bos, self.im_start, self.im_end = (self.special[s] for s in SPECIALS)
        self.vocab_size = self.first + len(self.merges)
        self.token_bytes = {b: bytes([b]) for b in range(256)}
        for i, (a, b) in enumerate(self.merges):
            self.token_bytes[self.first + i] = self.token_bytes[a] + self.token_bytes[b]
        self.cache = {}

    def _word(self, piece):
        ids = self.cache.get(piece)
        if ids is not None:
            return ids
        w = list(piece.encode('utf-8'))
        while len(w) > 1:
            # Lowest-ranked pair first, every occurrence left to right (the reference BPE loop).
            best = min((self.ranks.get(p, 1 << 30), p) for p in zip(w, w[1:]))
            if best[0] == 1 << 30:
                break
            out, i, new = [], 0, self.first + best[0]
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best[1]:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            w = out
        self.cache[piece] = w
        return w

    def encode(self, text):
        """Ordinary text only (special tokens are added by id, as the engine's chat template does)."""
        return [t for p in pieces(text) for t in self._word(p)]

    def decode(self, ids):
        return b''.join(self.token_bytes.get(i, b'') for i in ids).decode('utf-8', errors='replace')

    def tokenizer_json(self):
        u = bytes_to_unicode()
        tok = lambda i: ''.join(u[b] for b in self.token_bytes[i])
        vocab = {tok(i): i for i in range(256)}
        vocab.update({s: i for s, i in self.special.items()})
        for i in range(self.first, self.vocab_size):
            vocab[tok(i)] = i
        return {
            'version': '1.0',
            'truncation': None,
            'padding': None,
            'added_tokens': [
                {'id': i, 'content': s, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True}
                for s, i in self.special.items()
            ],
            'normalizer': None,
            'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
            'post_processor': None,
            'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
            'model': {
                'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': None, 'end_of_word_suffix': None,
                'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
                'vocab': vocab, 'merges': [[tok(a), tok(b)] for a, b in self.merges],
            },
        }

    @staticmethod
    def from_tokenizer_json(path):
        with open(path, encoding='utf-8') as f:
            j = json.load(f)
        vocab = j['model']['vocab']
        return Bpe([(vocab[a], vocab[b]) for a, b in j['model']['merges']])
