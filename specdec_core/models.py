"""Model pairs: a *target* p and a *draft* q over one shared vocabulary.

Speculative decoding needs nothing from a model but its next-token distribution, so a model here is any object
with ``probs(context) -> list[float]`` (a full row over the vocabulary, summing to 1). Three kinds of pair:

- ``agreement_pair(alpha)``: the same p and q at every position, built so that sum_x min(p(x), q(x)) equals
  ``alpha`` exactly. Positions are i.i.d., which is the assumption behind the closed forms in ``theory.py``.
- ``quality_pair(quality)``: a small Markov chain over 24 English words as the target, and as the draft a
  mixture ``quality * p + (1 - quality) * uniform``. Quality 0 is a random guesser, 1 is a perfect draft.
- ``ngram_pair()``: n-gram language models over the byte-level BPE tokens of ``tokenizer.py``, trained on the
  first 24 chapters of *Pride and Prejudice* (bundled, see ``data/README.md``): an interpolated Kneser-Ney
  trigram target and a weaker bigram draft with absolute discounting. Any text the reader types encodes.

Non-goals: neural models, logits. The n-gram counts are made lazily, on first use, never at
``import specdec_core``; the tokenizer's merges are shipped, never learned at run time.
"""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from itertools import pairwise
from operator import itemgetter
from typing import Protocol, TypeVar, overload

from .distributions import check_alpha, shape, validate_probs
from .tokenizer import TEXT_RESOURCE, bundled_tokenizer, training_paragraphs

__all__ = [
    "QUALITY_WORDS",
    "TEXT_RESOURCE",
    "FixedModel",
    "LanguageModel",
    "MarkovModel",
    "MixtureModel",
    "ModelPair",
    "NGramModel",
    "Pair",
    "TextCodec",
    "agreement_distributions",
    "agreement_pair",
    "ngram_pair",
    "quality_pair",
]


class LanguageModel(Protocol):
    """Anything that gives a next-token distribution for a context of token ids.

    A model may also declare ``context_size``: an int n such that its row depends on the last n tokens only
    (0: on none). Wrappers that cache rows (``MixtureModel``) key on those tokens; a model that does not declare
    it is keyed on its whole context.
    """

    def probs(self, context: Sequence[int]) -> list[float]: ...


def _context_key(model: object, context: Sequence[int]) -> tuple[int, ...]:
    """The part of ``context`` that ``model``'s row depends on, as a cache key."""
    size = getattr(model, "context_size", None)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        # NOTE: context[-0:] would be the whole context, hence the explicit case.
        return tuple(context[-size:]) if size else ()
    return tuple(context)


class ModelPair(Protocol):
    """A target and a draft over one vocabulary; ``end_token`` stops generation (None: never stops)."""

    @property
    def target(self) -> LanguageModel: ...

    @property
    def draft(self) -> LanguageModel: ...

    @property
    def vocab(self) -> list[str]: ...

    @property
    def end_token(self) -> int | None: ...


# The pair -------------------------------------------------------------------------------------------------------


class TextCodec(Protocol):
    """How a pair turns text into its token ids and back (``tokenizer.Tokenizer`` is one)."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int], *, show_bytes: bool = False) -> str: ...


@dataclass(frozen=True)
class Pair:
    """A concrete ``ModelPair`` with a readable vocabulary: ``vocab[i]`` is token i as the reader sees it.

    With a ``tokenizer`` (the n-gram pair's byte-level BPE), text goes through it: every string encodes and
    ``decode(encode(text)) == text``. Without one the vocabulary is a list of words: ``encode`` lower-cases the
    text, splits it into words and sentence punctuation (dropping quotes, dashes and underscores) and rejects a
    word outside ``vocab``; ``decode`` joins the words with spaces, punctuation stuck to the word before it.
    Either way the end token decodes to a line break.
    """

    target: LanguageModel
    draft: LanguageModel
    vocab: list[str]
    end_token: int | None = None
    name: str = ""
    tokenizer: TextCodec | None = None
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.vocab:
            raise ValueError("vocab must not be empty")
        if self.end_token is not None and not 0 <= self.end_token < len(self.vocab):
            raise ValueError(f"end_token must be a token id in 0..{len(self.vocab) - 1}")
        object.__setattr__(self, "_index", {w: i for i, w in enumerate(self.vocab)})

    def encode(self, text: str) -> list[int]:
        """Token ids for ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if self.tokenizer is not None:
            return self.tokenizer.encode(text)
        ids: list[int] = []
        for word in _WORD_RE.findall(text.lower()):
            token = self._index.get(word)
            if token is None:
                raise ValueError(f"text has a word outside the vocabulary: {word!r}")
            ids.append(token)
        return ids

    def decode(self, ids: Sequence[int], *, show_bytes: bool = False) -> str:
        """Text for token ids; the end token becomes a line break. ``show_bytes``: a byte that is not part of a
        whole character shows as ``<0xNN>``, not U+FFFD (only a tokenizer's tokens hold such bytes)."""
        for i, token in enumerate(ids):
            if isinstance(token, bool) or not isinstance(token, int):
                raise TypeError(f"ids[{i}] must be an int, got {type(token).__name__}")
            if not 0 <= token < len(self.vocab):
                raise ValueError(f"ids[{i}] must be a token id in 0..{len(self.vocab) - 1} (got {token})")
        if self.tokenizer is not None:
            return self.tokenizer.decode(ids, show_bytes=show_bytes)
        out: list[str] = []
        for token in ids:
            word = self.vocab[token]
            if token == self.end_token:
                out.append("\n")
            elif word in _PUNCTUATION or not out or out[-1] == "\n":
                out.append(word)
            else:
                out.append(" " + word)
        return "".join(out)


# Word pairs read words (with inner apostrophes, "don't") and the punctuation that shapes sentences.
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)*|[.,;:!?]")
_PUNCTUATION = frozenset(".,;:!?")


# Synthetic models -----------------------------------------------------------------------------------------------


class FixedModel:
    """The same distribution at every position, whatever the context (i.i.d. positions)."""

    context_size = 0

    def __init__(self, row: Sequence[float]) -> None:
        self.row = validate_probs(row, "row")

    def probs(self, context: Sequence[int]) -> list[float]:
        return list(self.row)


class MarkovModel:
    """A first-order Markov chain: the next distribution depends on the last token only.

    ``table[t]`` is the row after token ``t``; ``start`` is the row for an empty context.
    """

    context_size = 1

    def __init__(self, table: Sequence[Sequence[float]], start: Sequence[float]) -> None:
        self.table = [validate_probs(row, f"table[{i}]") for i, row in enumerate(table)]
        self.start = validate_probs(start, "start")
        if any(len(row) != len(self.start) for row in self.table) or len(self.table) != len(self.start):
            raise ValueError("table must be square, one row per token, each as long as start")

    def probs(self, context: Sequence[int]) -> list[float]:
        return list(self.table[context[-1]] if context else self.start)


class MixtureModel:
    """``weight * base + (1 - weight) * uniform``: a draft that knows the target only partly.

    Per token, min(p, w p + (1 - w) u) is p where p <= u and increases with w where p > u, so the acceptance
    rate sum_x min(p(x), q(x)) never decreases as ``weight`` grows: 1/V-ish at 0, exactly 1 at 1.

    Rows are kept in a least-recently-used cache of ``cache_size`` entries, keyed on the tokens the base's row
    depends on (its ``context_size``, or the whole context when it declares none), so any base model works.
    """

    def __init__(self, base: LanguageModel, weight: float, vocab_size: int, cache_size: int = 256) -> None:
        self.base = base
        self.weight = check_alpha(weight, "quality")
        self.vocab_size = vocab_size
        # The mixture sees exactly the context its base sees.
        self.context_size: int | None = getattr(base, "context_size", None)
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[int, ...], list[float]] = OrderedDict()

    def probs(self, context: Sequence[int]) -> list[float]:
        # Keyed on the tokens the base row depends on (all of them when the base does not say), so two contexts
        # share a cached row only when the base would give them the same one.
        key = _context_key(self.base, context)
        row = self._cache.get(key)
        if row is None:
            w, rest = self.weight, (1.0 - self.weight) / self.vocab_size
            row = [w * x + rest for x in self.base.probs(context)]
            self._cache[key] = row
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return list(row)


# (a) A set agreement rate ---------------------------------------------------------------------------------------

_Num = TypeVar("_Num", float, Fraction)


@overload
def agreement_distributions(alpha: Fraction, vocab_size: int = 8) -> tuple[list[Fraction], list[Fraction]]: ...


@overload
def agreement_distributions(alpha: float, vocab_size: int = 8) -> tuple[list[float], list[float]]: ...


def agreement_distributions(
    alpha: float | Fraction, vocab_size: int = 8
) -> tuple[list[float], list[float]] | tuple[list[Fraction], list[Fraction]]:
    """Target p and draft q with sum_x min(p(x), q(x)) = ``alpha`` exactly.

    Construction: a shared part s (weights V, V-1, ..., 1, normalised) and two parts with disjoint supports,
    a on the even ids and b on the odd ids, both uniform there:

        p = alpha * s + (1 - alpha) * a,     q = alpha * s + (1 - alpha) * b.

    Where a is positive b is zero and vice versa, so min(p, q) = alpha * s at every token and the sum is alpha.
    With a ``Fraction`` alpha the arithmetic is exact; with a float it is exact up to rounding (~1e-16).

    >>> p, q = agreement_distributions(Fraction(1, 3), vocab_size=2)
    >>> p, q
    ([Fraction(8, 9), Fraction(1, 9)], [Fraction(2, 9), Fraction(7, 9)])
    >>> sum(min(x, y) for x, y in zip(p, q))
    Fraction(1, 3)
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 2:
        raise ValueError(f"vocab_size must be at least 2, so that p and q can disagree (got {vocab_size})")
    if isinstance(alpha, Fraction):
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha must be between 0 and 1 (got {alpha})")
        return _agreement(alpha, vocab_size, Fraction(1))
    return _agreement(check_alpha(alpha), vocab_size, 1.0)


def _agreement(alpha: _Num, vocab_size: int, one: _Num) -> tuple[list[_Num], list[_Num]]:
    total = one * (vocab_size * (vocab_size + 1) // 2)
    shared = [(one * (vocab_size - i)) / total for i in range(vocab_size)]
    evens = [i for i in range(vocab_size) if i % 2 == 0]
    odds = [i for i in range(vocab_size) if i % 2 == 1]
    a = [one / len(evens) if i % 2 == 0 else one * 0 for i in range(vocab_size)]
    b = [one / len(odds) if i % 2 == 1 else one * 0 for i in range(vocab_size)]
    rest = one - alpha
    p = [alpha * s + rest * x for s, x in zip(shared, a, strict=True)]
    q = [alpha * s + rest * x for s, x in zip(shared, b, strict=True)]
    return p, q


def agreement_pair(alpha: float, vocab_size: int = 8) -> Pair:
    """A pair whose p and q are the same at every position and agree at rate ``alpha`` (see above).

    >>> pair = agreement_pair(0.8)
    >>> from specdec_core.distributions import acceptance_rate
    >>> round(acceptance_rate(pair.target.probs([]), pair.draft.probs([3, 1])), 12)
    0.8
    """
    p, q = agreement_distributions(float(check_alpha(alpha)), vocab_size)
    words = [QUALITY_WORDS[i] if i < len(QUALITY_WORDS) else f"w{i}" for i in range(vocab_size)]
    return Pair(FixedModel(p), FixedModel(q), words, None, f"agreement {alpha:g}")


# (b) A draft-quality knob over readable words -------------------------------------------------------------------

# Word classes of a toy grammar: determiner (adjective*) noun verb ... Each class is a contiguous id range.
_CLASSES: dict[str, list[str]] = {
    "det": ["the", "a", "every"],
    "adj": ["small", "old", "quiet", "clever", "grey"],
    "noun": ["cat", "dog", "fox", "bird", "child", "farmer"],
    "verb": ["sees", "chases", "follows", "finds", "likes"],
    "prep": ["near", "under", "behind"],
    "and": ["and"],
    ".": ["."],
}
#: The 24 words of ``quality_pair``, in token-id order.
QUALITY_WORDS: list[str] = [w for words in _CLASSES.values() for w in words]

# Which class follows which, with what probability (rows sum to 1).
_GRAMMAR: dict[str, dict[str, float]] = {
    "det": {"adj": 0.35, "noun": 0.65},
    "adj": {"adj": 0.15, "noun": 0.85},
    "noun": {"verb": 0.55, "prep": 0.15, ".": 0.2, "and": 0.1},
    "verb": {"det": 1.0},
    "prep": {"det": 1.0},
    "and": {"det": 1.0},
    ".": {"det": 1.0},
}
# Within a class, words get these weights, rotated by the previous token id so every context differs.
_WORD_WEIGHTS = [6, 3, 2, 1.5, 1, 0.5]


def _markov_row(previous: int) -> list[float]:
    word_class = next(c for c, words in _CLASSES.items() if QUALITY_WORDS[previous] in words)
    row: list[float] = []
    for next_class, words in _CLASSES.items():
        mass = _GRAMMAR[word_class].get(next_class, 0.0)
        weights = [_WORD_WEIGHTS[(j + previous) % len(words)] for j in range(len(words))]
        total = math.fsum(weights)
        row.extend(mass * w / total for w in weights)
    return row


def quality_pair(quality: float) -> Pair:
    """A word-level Markov target and a draft of the given quality in [0, 1].

    The draft is ``quality * p + (1 - quality) * uniform`` over the same 24 words: at 0 it guesses at random,
    at 1 it is the target, and the acceptance rate grows monotonically in between (see ``MixtureModel``).
    An empty context counts as the start of a sentence.

    >>> pair = quality_pair(1.0)
    >>> pair.target.probs([]) == pair.draft.probs([])
    True
    >>> pair.decode([0, 3, 8, 15, 0, 9, 23])
    'the small cat chases the dog.'
    """
    weight = check_alpha(quality, "quality")
    vocab_size = len(QUALITY_WORDS)
    table = [_markov_row(t) for t in range(vocab_size)]
    target = MarkovModel(table, start=table[QUALITY_WORDS.index(".")])
    return Pair(target, MixtureModel(target, weight, vocab_size), list(QUALITY_WORDS), None, f"quality {weight:g}")


# (c) n-gram language models on a public-domain text -------------------------------------------------------------

#: Kneser-Ney / absolute discount; 0.75 is the customary value (Chen & Goodman 1998).
_DISCOUNT = 0.75
#: Share of uniform mass mixed into the lowest order, so every token keeps a positive probability.
_FLOOR = 0.01


@dataclass(frozen=True)
class _Counts:
    """Everything the two n-gram models need, counted once from the bundled text."""

    vocab: list[str]
    unigram: list[int]  # [V] raw counts
    bigram: dict[int, dict[int, int]]  # v -> w -> c(v w)
    trigram: dict[tuple[int, int], dict[int, int]]  # (u, v) -> w -> c(u v w)
    continuation: list[float]  # [V] P_cont(w) = N1+(. w) / N1+(. .), floored with uniform mass
    middle: dict[int, dict[int, int]]  # v -> w -> N1+(. v w): distinct left neighbours of "v w"


@cache
def _counts() -> _Counts:
    tokenizer = bundled_tokenizer()
    vocab, end = tokenizer.pieces(), tokenizer.end_token
    # Each paragraph is its own sequence: padded with <end> <end> before its first token (so an empty context,
    # which the models pad the same way, starts a paragraph) and closed by <end>. Counting within each sequence
    # keeps the padding of one paragraph from reading as the continuation of the last. Counter counts in C, and
    # keeps first-seen order, so every row and key below comes in the order the text first shows it.
    triples: Counter[tuple[int, int, int]] = Counter()
    pairs: Counter[tuple[int, int]] = Counter()
    for paragraph in training_paragraphs():
        stream = [end, end, *tokenizer.encode(paragraph), end]
        triples.update(zip(stream, stream[1:], stream[2:], strict=False))
        pairs.update(pairwise(stream[1:]))  # the pairs that end each triple
    size = len(vocab)
    unigram = [0] * size
    bigram: dict[int, dict[int, int]] = {}
    for (v, w), count in pairs.items():
        unigram[w] += count
        bigram.setdefault(v, {})[w] = count
    trigram: dict[tuple[int, int], dict[int, int]] = {}
    for (u, v, w), count in triples.items():
        trigram.setdefault((u, v), {})[w] = count
    middle: dict[int, dict[int, int]] = {}
    for (v, w), count in Counter(map(itemgetter(1, 2), triples)).items():  # distinct triples ending in "v w"
        middle.setdefault(v, {})[w] = count
    left_types = [0] * size  # N1+(. w): distinct tokens seen before w
    for w, count in Counter(map(itemgetter(1), pairs)).items():
        left_types[w] = count
    n_types = sum(left_types)
    continuation = [(1 - _FLOOR) * c / n_types + _FLOOR / size for c in left_types]
    return _Counts(vocab, unigram, bigram, trigram, continuation, middle)


class NGramModel:
    """An n-gram model over the bundled text's BPE tokens, with temperature, top-k and top-p.

    ``order=3`` is the target: interpolated Kneser-Ney (Chen & Goodman 1998, section 3.5) with discount
    D = 0.75 down to a continuation unigram. ``order=2`` is the draft: a bigram with absolute discounting
    interpolated with add-one unigram frequencies (no continuation counts), a deliberately weaker model over
    the same vocabulary. ``order=1`` is the add-one unigram alone.

    Rows are computed on demand and kept in a small least-recently-used cache, since the page asks for the
    same contexts again and again (every round re-scores the prefix it drafted).
    """

    def __init__(
        self,
        order: int = 3,
        *,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        cache_size: int = 256,
    ) -> None:
        if order not in (1, 2, 3):
            raise ValueError(f"order must be 1, 2 or 3 (got {order})")
        self.order = order
        self.context_size = order - 1  # the row depends on the last order - 1 tokens
        self.temperature = temperature
        self.top_k = top_k
        self.top_p = top_p
        # Shape a probe row now, so bad knobs fail here with the argument's name rather than mid-generation.
        shape([0.5, 0.5], temperature=temperature, top_k=top_k, top_p=top_p)
        self._shaped = (temperature, top_k, top_p) != (1.0, 0, 1.0)
        self.counts = _counts()
        self.vocab = self.counts.vocab
        self.end_token = len(self.vocab) - 1  # the tokenizer's <end> comes last
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[int, int], list[float]] = OrderedDict()
        total = sum(self.counts.unigram)
        size = len(self.vocab)
        self._add_one = [(c + 1) / (total + size) for c in self.counts.unigram]
        self._parts: list[tuple[float, list[tuple[int, float]]]] | None = None  # made by mixed_row on first use

    def __call__(self, context: Sequence[int]) -> list[float]:
        return self.probs(context)

    def probs(self, context: Sequence[int]) -> list[float]:
        """The next-token distribution after ``context`` (token ids; only the last two matter)."""
        size = len(self.vocab)
        end = self.end_token
        tail = [end, end, *context[-2:]]
        u, v = tail[-2], tail[-1]
        for token in (u, v):
            if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < size:
                raise ValueError(f"context must hold token ids in 0..{size - 1} (got {token!r})")
        # Only the last order - 1 tokens shape the row: a bigram's rows are keyed on v alone, so they are shared.
        key = (u if self.order == 3 else -1, v if self.order >= 2 else -1)
        row = self._cache.get(key)
        if row is None:
            row = self._row(u, v)
            if self._shaped:
                row = shape(row, temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)
            self._cache[key] = row
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return list(row)

    def mixed_row(self, weights: Sequence[float]) -> list[float]:
        """sum_v weights[v] * probs([v]): the next row averaged over a distribution of the last token.

        The step of a chain of marginals (``drafters.IndependentHeadsDrafter``). For the unshaped bigram and unigram
        a row is a multiple of the add-one unigram plus the discounted counts seen after v, so the sum takes
        O(V + bigram types) rather than O(V^2); other models sum their rows.
        """
        size = len(self.vocab)
        if len(weights) != size:
            raise ValueError(f"weights must have one entry per token ({size}), got {len(weights)}")
        if self.order == 3 or self._shaped:
            out = [0.0] * size
            for v, w in enumerate(weights):
                if w > 0.0:
                    for x, px in enumerate(self.probs([v])):
                        out[x] += w * px
            return out
        if self.order == 1:
            return [math.fsum(weights) * x for x in self._add_one]
        parts = self._bigram_parts()
        floor = 0.0  # total weight the add-one unigram gets
        sparse = [0.0] * size
        for v, w in enumerate(weights):
            if w <= 0.0:
                continue
            share, seen = parts[v]
            floor += w * share
            for x, value in seen:
                sparse[x] += w * value
        return [floor * a + b for a, b in zip(self._add_one, sparse, strict=True)]

    def _bigram_parts(self) -> list[tuple[float, list[tuple[int, float]]]]:
        """Per last token v: the add-one unigram's share of the bigram row and the discounted counts after v."""
        if self._parts is None:
            parts: list[tuple[float, list[tuple[int, float]]]] = []
            for v in range(len(self.vocab)):
                seen = self.counts.bigram.get(v)
                if not seen:
                    parts.append((1.0, []))
                    continue
                total = sum(seen.values())
                parts.append((_DISCOUNT * len(seen) / total, [(x, (c - _DISCOUNT) / total) for x, c in seen.items()]))
            self._parts = parts
        return self._parts

    def _row(self, u: int, v: int) -> list[float]:
        if self.order == 1:
            return list(self._add_one)
        if self.order == 2:
            return _discounted(self.counts.bigram.get(v), self._add_one)
        lower = _discounted(self.counts.middle.get(v), self.counts.continuation)
        return _discounted(self.counts.trigram.get((u, v)), lower)


def _discounted(seen: dict[int, int] | None, lower: list[float]) -> list[float]:
    """Interpolated absolute discounting: (max(c(w) - D, 0) + D * types * lower(w)) / total.

    The lower-order row gets exactly the mass the discount removed, so the result sums to 1 when ``lower``
    does. A context never seen falls back to ``lower`` entirely.
    """
    if not seen:
        return list(lower)
    total = sum(seen.values())
    weight = _DISCOUNT * len(seen) / total
    row = [weight * x for x in lower]
    for w, c in seen.items():
        row[w] += (c - _DISCOUNT) / total
    return row


def ngram_pair(
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    target_order: int = 3,
    draft_order: int = 2,
) -> Pair:
    """The trigram target and bigram draft over the bundled text, shaped by the same sampling knobs.

    The vocabulary is the bundled tokenizer's (``tokenizer.bundled_tokenizer()``): 256 bytes, 767 merges and
    ``<end>``, the end token. Text goes through the tokenizer, so every string encodes and decodes back exactly.
    The first call counts the n-grams (a fraction of a second); later calls reuse the counts. Both models see
    the same temperature, top-k and top-p, as when a serving system applies one request's settings to both;
    exactness only needs the target to be verified with its shaped distribution.

    >>> pair = ngram_pair()
    >>> len(pair.vocab), pair.vocab[pair.end_token]
    (1024, '<end>')
    >>> ids = pair.encode("Mr. Darcy smiled.")
    >>> [pair.vocab[t] for t in ids]
    ['Mr', '.', '▁Darcy', '▁sm', 'il', 'ed', '.']
    >>> pair.decode(ids)
    'Mr. Darcy smiled.'
    """
    target = NGramModel(target_order, temperature=temperature, top_k=top_k, top_p=top_p)
    draft = NGramModel(draft_order, temperature=temperature, top_k=top_k, top_p=top_p)
    name = "pride and prejudice n-grams"
    return Pair(target, draft, list(target.vocab), target.end_token, name, bundled_tokenizer())
