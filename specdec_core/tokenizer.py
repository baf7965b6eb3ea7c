"""A small byte-level BPE tokenizer trained on the bundled text: every string encodes, nothing is unknown.

Byte pair encoding (Sennrich et al. 2016) over UTF-8 bytes, as GPT-2 uses it (Radford et al. 2019, section 2.2):

1. **Bytes first.** Text is encoded as UTF-8, and the 256 byte values are the first 256 tokens, so any string
   in any script encodes: a word the training text never had falls back to smaller pieces, down to single bytes.
2. **Chunks.** Before counting, a regex splits text into chunks: a word with the space before it, a number, a
   run of punctuation, a run of whitespace. Merges happen inside a chunk, never across, so a token is a piece
   of one word (" Darcy", "ing"), never the end of one word glued to the start of the next.
3. **Training** repeats one step: count every pair of adjacent tokens in every chunk, and turn the most frequent
   pair into a new token. Ties go to the smallest pair of ids, (left, right) compared as a tuple, so training
   is deterministic. Merge i makes token 256 + i.
4. **Encoding** a chunk starts from its bytes and applies, while it can, the earliest-learned merge among the
   adjacent pairs present: the same merges, in the same order, that training made.
5. **Paragraph end.** One special token, ``<end>``, comes last: a line break encodes to it and it decodes to a
   line break. Other whitespace stays ordinary bytes.

Worked example: train on "banana bandana" with 3 merges (vocab_size 256 + 3 + 1 for ``<end>``). The chunks are
"banana" and " bandana". Pair counts: "an" 4, "na" 3, "ba" 2, ...: merge 0 makes "an" (256). Now "b an an a" and
" b an d an a" give (b, an) 2 and (an, a) 2, a tie that goes to the smaller pair (98, 256): merge 1 makes "ban"
(257). Then (an, a) is the only pair left with count 2: merge 2 makes "ana" (258).

>>> tok = train("banana bandana", vocab_size=260)
>>> [tok.piece(token) for token in range(256, 259)]
['an', 'ban', 'ana']
>>> ids = tok.encode("bandana banana\\ncafé")
>>> [tok.piece(token) for token in ids]
['ban', 'd', 'ana', '▁', 'ban', 'ana', '<end>', 'c', 'a', 'f', '<0xC3>', '<0xA9>']
>>> tok.decode(ids)
'bandana banana\\ncafé'

``piece`` shows a token readably: a space as "▁", and a byte that is not a whole printable character on its own
(the halves of "é" above, a tab) as ``<0xNN>``.

``bundled_tokenizer()`` loads the merges learned from the bundled text (``data/bpe_merges.txt``, 1,024 tokens),
so nothing trains at import or at first use; ``train_bundled()`` learns them again from the text.

Left out, on purpose: special tokens written as text (the string "<end>" encodes as ordinary bytes, so typed
text can never inject one); Unicode normalisation (NFC); GPT-2's mapping of bytes to printable characters (we
show pieces with "▁" and ``<0xNN>`` instead); the Unicode property classes of GPT-2's and GPT-4's split patterns
(``re`` has no ``\\p{L}``, so ``[^\\W\\d_]`` stands for a letter); BPE dropout; compatibility with the vocabulary
files of other tokenizers; speed beyond what a 240 KB text needs.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import pairwise, repeat

__all__ = [
    "BUNDLED_VOCAB_SIZE",
    "END",
    "MERGES_RESOURCE",
    "TEXT_RESOURCE",
    "Tokenizer",
    "bundled_tokenizer",
    "merge",
    "split_chunks",
    "train",
    "train_bundled",
    "training_paragraphs",
]

#: The paragraph-end token's piece; a line break encodes to it.
END = "<end>"
#: Where the bundled text lives inside the package (read with importlib.resources, so it works from a wheel).
TEXT_RESOURCE = "data/pride_and_prejudice_1-24.txt"
#: The merges learned from it, one "left right" pair of ids per line.
MERGES_RESOURCE = "data/bpe_merges.txt"
#: 256 bytes + 767 merges + ``<end>``: rows as narrow as a 1,000-word vocabulary's.
BUNDLED_VOCAB_SIZE = 1024

# Chunks, tried in this order: a word with an optional leading space (apostrophes inside it stay: "don't",
# "Darcy's"); a number; a run of punctuation or symbols (emoji land here); whitespace, where a run before a
# word leaves its last space to the word ("a  b" -> "a", " ", " b"). Between them they match every character.
_CHUNK_RE = re.compile(r" ?[^\W\d_]+(?:'[^\W\d_]+)*| ?\d+| ?(?:[^\w\s]|_)+|\s+(?!\S)|\s+")

_IdPair = tuple[int, int]  # two adjacent token ids


def split_chunks(text: str) -> list[str]:
    """The chunks of ``text`` that merges stay inside; they join back to ``text`` exactly.

    >>> split_chunks('"My dear Mr. Bennet,"  said  42 🙂')
    ['"', 'My', ' dear', ' Mr', '.', ' Bennet', ',"', ' ', ' said', ' ', ' 42', ' 🙂']
    """
    return _CHUNK_RE.findall(text)


def merge(ids: Sequence[int], pair: _IdPair, token: int) -> list[int]:
    """Replace each occurrence of ``pair`` in ``ids``, left to right, by ``token``.

    >>> merge([97, 97, 97, 98], (97, 97), 256)
    [256, 97, 98]
    """
    first, second = pair
    out: list[int] = []
    i, last = 0, len(ids) - 1
    while i <= last:
        here = ids[i]
        # The pair's first id is tested alone first: most positions fail there, before a tuple is ever built.
        if here == first and i < last and ids[i + 1] == second:
            out.append(token)
            i += 2
        else:
            out.append(here)
            i += 1
    return out


class Tokenizer:
    """A byte-level BPE tokenizer given by its merges: ``merges[i]`` is the pair of ids that makes 256 + i.

    Token ids: 0..255 are bytes, 256..255 + len(merges) are merges, and ``end_token`` (the last id) is ``<end>``.
    """

    def __init__(self, merges: Sequence[tuple[int, int]]) -> None:
        self.merges: list[_IdPair] = []
        self._bytes: list[bytes] = [bytes([b]) for b in range(256)]
        for i, pair in enumerate(merges):
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(f"merges[{i}] must be a pair of token ids")
            for token in pair:
                if isinstance(token, bool) or not isinstance(token, int):
                    raise TypeError(f"merges[{i}] must hold ints, got {type(token).__name__}")
                if not 0 <= token < 256 + i:
                    raise ValueError(f"merges[{i}] must join ids in 0..{255 + i} (got {pair!r})")
            self.merges.append((pair[0], pair[1]))
            self._bytes.append(self._bytes[pair[0]] + self._bytes[pair[1]])
        self._ranks = {pair: i for i, pair in enumerate(self.merges)}
        if len(self._ranks) != len(self.merges):
            raise ValueError("merges must not repeat a pair")
        self.end_token = 256 + len(self.merges)
        self.vocab_size = self.end_token + 1
        self._chunk_cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return self.vocab_size

    def token_bytes(self, token: int) -> bytes:
        """The bytes a token stands for (``<end>``: a line break)."""
        self._check(token, "token")
        return b"\n" if token == self.end_token else self._bytes[token]

    def piece(self, token: int) -> str:
        """A token as readable text: a space shows as "▁", and a byte that is not a printable character as <0xNN>."""
        self._check(token, "token")
        if token == self.end_token:
            return END
        # surrogateescape keeps each undecodable byte as one lone surrogate, U+DC80..U+DCFF.
        text = self._bytes[token].decode("utf-8", errors="surrogateescape")
        return "".join(_show(char) for char in text)

    def pieces(self) -> list[str]:
        """``piece`` of every token, in id order."""
        return [self.piece(token) for token in range(self.vocab_size)]

    def encode(self, text: str) -> list[int]:
        """Token ids for ``text``: any string; each line break becomes ``end_token``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:  # only a lone surrogate (U+D800..U+DFFF) has no UTF-8 form
            raise ValueError(f"text must be valid Unicode: a lone surrogate at index {error.start}") from None
        ids: list[int] = []
        for i, line in enumerate(text.split("\n")):
            if i:
                ids.append(self.end_token)
            for chunk in split_chunks(line):
                ids.extend(self._encode_chunk(chunk))
        return ids

    def decode(self, ids: Sequence[int], *, show_bytes: bool = False) -> str:
        """The text of token ids. A byte that is not part of a whole character (a sequence cut inside one, or bytes
        no character is made of) shows as U+FFFD, or with ``show_bytes`` as ``<0xNN>``, as ``piece`` shows it.

        >>> tok = bundled_tokenizer()
        >>> tok.decode([0x61, 0xC3]), tok.decode([0x61, 0xC3], show_bytes=True), tok.decode([0xC3, 0xA9])
        ('a\ufffd', 'a<0xC3>', 'é')
        """
        parts: list[bytes] = []
        for i, token in enumerate(ids):
            self._check(token, f"ids[{i}]")
            parts.append(b"\n" if token == self.end_token else self._bytes[token])
        if not show_bytes:
            return b"".join(parts).decode("utf-8", errors="replace")
        text = b"".join(parts).decode("utf-8", errors="surrogateescape")
        return re.sub("[\udc80-\udcff]", lambda m: f"<0x{ord(m.group()) - 0xDC00:02X}>", text)

    def to_text(self) -> str:
        """The merges as the text of ``data/bpe_merges.txt`` (``from_text`` reads it back)."""
        header = (
            f"# Byte-level BPE merges for specdec_core.tokenizer: {len(self.merges)} merges, vocab_size"
            f" {self.vocab_size}.\n# Each line below joins two token ids; line i (from 0) makes token 256 + i.\n"
        )
        return header + "".join(f"{a} {b}\n" for a, b in self.merges)

    @classmethod
    def from_text(cls, text: str) -> Tokenizer:
        """A tokenizer from the text ``to_text`` writes."""
        merges: list[_IdPair] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 2 or not all(f.isdigit() for f in fields):
                raise ValueError(f"text line {number} must hold two token ids (got {line!r})")
            merges.append((int(fields[0]), int(fields[1])))
        return cls(merges)

    def _encode_chunk(self, chunk: str) -> list[int]:
        cached = self._chunk_cache.get(chunk)
        if cached is not None:
            return cached
        ids = list(chunk.encode("utf-8"))
        ranks, unmerged = self._ranks, len(self._ranks)
        while len(ids) >= 2:
            # The earliest-learned merge among the adjacent pairs; training made it before any other here. A rank
            # names one pair, so the smallest rank is the pair min(pairs, key=rank) would pick.
            found = list(map(ranks.get, pairwise(ids), repeat(unmerged)))
            rank = min(found)
            if rank == unmerged:
                break
            if found.count(rank) == 1:  # the usual case: one occurrence, replaced in place without a rebuild
                at = found.index(rank)
                ids[at : at + 2] = [256 + rank]
            else:
                ids = merge(ids, self.merges[rank], 256 + rank)
        if len(self._chunk_cache) < 100_000:  # bounded: a reader can type any number of distinct words
            self._chunk_cache[chunk] = ids
        return ids

    def _check(self, token: object, name: str) -> None:
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"{name} must be an int, got {type(token).__name__}")
        if not 0 <= token < self.vocab_size:
            raise ValueError(f"{name} must be a token id in 0..{self.vocab_size - 1} (got {token})")


def _show(char: str) -> str:
    if char == " ":
        return "▁"
    if "\udc80" <= char <= "\udcff":  # a byte that is not valid UTF-8 here, kept by surrogateescape
        return f"<0x{ord(char) - 0xDC00:02X}>"
    if not char.isprintable():
        return "".join(f"<0x{b:02X}>" for b in char.encode("utf-8"))
    return char


# Training --------------------------------------------------------------------------------------------------------


def train(text: str, vocab_size: int) -> Tokenizer:
    """Learn ``vocab_size - 257`` merges from ``text`` (fewer if it runs out of pairs); see the module docstring.

    Fast because it never rescans the text: a chunk that occurs n times is one entry with weight n, the pair
    counts are updated only for the chunks a merge touches, and a heap finds the most frequent pair.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 257:
        raise ValueError(f"vocab_size must be at least 257: 256 bytes and <end> (got {vocab_size})")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    # Step 1: each distinct chunk once, with how often it occurs. Counter keeps first-seen order.
    weights = Counter(chunk for line in text.split("\n") for chunk in split_chunks(line))
    words = [list(chunk.encode("utf-8")) for chunk in weights]
    freq = list(weights.values())
    # Step 2: pair counts over all chunks, and which chunks hold each pair.
    counts: dict[_IdPair, int] = {}
    where: dict[_IdPair, set[int]] = {}
    for i, word in enumerate(words):
        _update(counts, where, i, Counter(pairwise(word)), freq[i])
    heap = [(-count, pair) for pair, count in counts.items()]
    heapq.heapify(heap)
    merges: list[_IdPair] = []
    # Step 3: merge the most frequent pair, then recount only the chunks that held it.
    while len(merges) < vocab_size - 257:
        best = _pop_best(heap, counts)
        if best is None:
            break
        token = 256 + len(merges)
        merges.append(best)
        for i in sorted(where.pop(best)):
            old = words[i]
            words[i] = merge(old, best, token)
            delta = Counter(pairwise(words[i]))
            delta.subtract(pairwise(old))
            changed = _update(counts, where, i, delta, freq[i])
            for pair in changed:
                if pair in counts:
                    heapq.heappush(heap, (-counts[pair], pair))
    return Tokenizer(merges)


def _update(
    counts: dict[_IdPair, int], where: dict[_IdPair, set[int]], i: int, delta: Counter[_IdPair], weight: int
) -> list[_IdPair]:
    """Add ``delta`` (pair -> change in occurrences within chunk i) times the chunk's ``weight``."""
    changed: list[_IdPair] = []
    for pair, change in delta.items():
        if change == 0:
            continue
        changed.append(pair)
        count = counts.get(pair, 0) + change * weight
        if count:
            counts[pair] = count
        else:
            del counts[pair]
        if change > 0:
            where.setdefault(pair, set()).add(i)
    # A chunk keeps its place in ``where`` for a pair it lost: harmless, since merging a pair that is no longer
    # there changes nothing, and cheaper than working out whether any occurrence is left.
    return changed


def _pop_best(heap: list[tuple[int, _IdPair]], counts: dict[_IdPair, int]) -> _IdPair | None:
    """The most frequent pair, ties to the smallest; heap entries whose count has since changed are stale."""
    while heap:
        negative, pair = heapq.heappop(heap)
        if counts.get(pair) == -negative:
            return pair
    return None


# The bundled text ------------------------------------------------------------------------------------------------


def _read(resource: str) -> str:
    # Imported on first use: importlib.resources costs about 12 ms of start-up in Pyodide, and only the n-gram
    # pages read the bundled files.
    from importlib import resources

    return resources.files("specdec_core").joinpath(resource).read_text(encoding="utf-8")


def training_paragraphs() -> list[str]:
    """The prose paragraphs of the bundled text, one line each: what the tokenizer and the n-grams learn from.

    Blank lines separate paragraphs; chapter headings and the title page are left out; the underscores that
    mark italics are dropped and the line breaks that wrap a paragraph become spaces.
    """
    return list(_paragraphs())


@cache
def _paragraphs() -> tuple[str, ...]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n", _read(TEXT_RESOURCE)):
        block = " ".join(block.replace("_", "").split())
        if block and not re.fullmatch(r"Chapter \d+|PRIDE AND PREJUDICE|By Jane Austen", block):
            out.append(block)
    return tuple(out)


def train_bundled(vocab_size: int = BUNDLED_VOCAB_SIZE) -> Tokenizer:
    """Train on the bundled paragraphs, one per line: ``bundled_tokenizer()``'s merges come from here."""
    return train("\n".join(training_paragraphs()), vocab_size)


@cache
def bundled_tokenizer() -> Tokenizer:
    """The tokenizer whose merges ship in ``data/bpe_merges.txt`` (learned by ``train_bundled()``)."""
    return Tokenizer.from_text(_read(MERGES_RESOURCE))
