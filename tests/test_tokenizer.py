"""The byte-level BPE tokenizer: training against a naive reference, the shipped merges, the round trip."""

from __future__ import annotations

import re
from collections import Counter
from importlib import resources

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from specdec_core.tokenizer import (
    BUNDLED_VOCAB_SIZE,
    END,
    MERGES_RESOURCE,
    Tokenizer,
    bundled_tokenizer,
    split_chunks,
    train,
    train_bundled,
    training_paragraphs,
)

# A reference trainer ---------------------------------------------------------------------------------------------


def _naive_merge(ids: list[int], pair: tuple[int, int], token: int) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(ids):
        if tuple(ids[i : i + 2]) == pair:
            out.append(token)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def naive_train(text: str, vocab_size: int) -> list[tuple[int, int]]:
    """The obvious O(text x merges) loop: recount every pair in every chunk occurrence before each merge."""
    chunks = [list(chunk.encode("utf-8")) for line in text.split("\n") for chunk in split_chunks(line)]
    merges: list[tuple[int, int]] = []
    while len(merges) < vocab_size - 257:
        counts: Counter[tuple[int, int]] = Counter()
        for ids in chunks:
            for i in range(len(ids) - 1):
                counts[(ids[i], ids[i + 1])] += 1
        if not counts:
            break
        best = max(counts, key=lambda pair: (counts[pair], -pair[0], -pair[1]))
        chunks = [_naive_merge(ids, best, 256 + len(merges)) for ids in chunks]
        merges.append(best)
    return merges


def test_naive_merge_is_left_to_right() -> None:
    assert _naive_merge([97, 97, 97, 97, 97], (97, 97), 256) == [256, 256, 97]
    assert _naive_merge([98, 97, 97, 98], (97, 98), 256) == [98, 97, 256]


EXCERPT = "\n".join(training_paragraphs()[:40])


@pytest.mark.parametrize(
    ("text", "vocab_size"),
    [
        (EXCERPT, 256 + 1 + 300),
        ("aaaa aaa aa a\nabab baba abab\naaaaaaa", 256 + 1 + 40),  # overlapping pairs and ties; runs out of pairs
        ("café naïve 🙂🙂 über über Über 東京 東京\n\t\t x_y x_y", 256 + 1 + 60),  # multi-byte characters
    ],
    ids=["excerpt", "ties-and-overlaps", "unicode"],
)
def test_fast_trainer_learns_the_same_merges_as_the_naive_loop(text: str, vocab_size: int) -> None:
    expected = naive_train(text, vocab_size)
    assert train(text, vocab_size).merges == expected
    assert len(expected) > 10


def test_training_stops_when_no_pair_is_left() -> None:
    tok = train("ab ab", vocab_size=300)
    # Chunks "ab" and " ab": (a, b) occurs twice and is merged first; then (" ", ab) is the only pair left.
    assert [tok.piece(t) for t in range(256, tok.end_token)] == ["ab", "▁ab"]
    assert tok.vocab_size == 256 + 2 + 1 and tok.piece(tok.end_token) == END


def test_ties_go_to_the_smallest_pair() -> None:
    # One word per line: "cd" and "ab" both occur twice; (97, 98) < (99, 100), so "ab" comes first.
    assert train("cd\ncd\nab\nab", vocab_size=258).merges == [(97, 98)]
    # With spaces, (" ", "a") = (32, 97) ties with both and is smaller still.
    assert train("cd cd ab ab", vocab_size=258).merges == [(32, 97)]


# The shipped merges ---------------------------------------------------------------------------------------------


def test_shipped_merges_are_what_training_on_the_bundled_text_learns() -> None:
    shipped = bundled_tokenizer()
    assert shipped.vocab_size == BUNDLED_VOCAB_SIZE == 1024 and len(shipped.merges) == 767
    assert train_bundled().merges == shipped.merges


def test_shipped_file_is_small_and_reads_back() -> None:
    text = resources.files("specdec_core").joinpath(MERGES_RESOURCE).read_text(encoding="utf-8")
    assert len(text) < 10_000
    assert Tokenizer.from_text(text).merges == bundled_tokenizer().merges
    assert Tokenizer.from_text(bundled_tokenizer().to_text()).merges == bundled_tokenizer().merges


def test_bundled_pieces_are_readable_and_distinct() -> None:
    tok = bundled_tokenizer()
    pieces = tok.pieces()
    assert len(set(pieces)) == len(pieces) == 1024
    assert pieces[32] == "▁" and pieces[9] == "<0x09>" and pieces[0xE2] == "<0xE2>" and pieces[65] == "A"
    assert pieces[tok.end_token] == "<end>" and tok.end_token == 1023
    # Frequent words of the novel are single tokens, with their leading space.
    for word in [" the", " Darcy", " Bingley", "Elizabeth", " Mr"]:
        assert len(tok.encode(word)) == 1, word


def test_prompt_encodes_into_readable_pieces() -> None:
    tok = bundled_tokenizer()
    ids = tok.encode("Mr. Darcy looked at her and")
    assert [tok.piece(t) for t in ids] == ["Mr", ".", "▁Darcy", "▁l", "oo", "ked", "▁at", "▁her", "▁and"]


# Encoding and decoding ------------------------------------------------------------------------------------------


@given(st.text())
@example("")
@example("It is a truth universally acknowledged, that a single man...\n\n“Oh!” 🙂👍🏽 naïve café e\u0301 東京")
@example("\r\n\t  trailing spaces  \n")
@example("<end>\n<0xE2>▁")
def test_decode_inverts_encode_for_any_text(text: str) -> None:
    tok = bundled_tokenizer()
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert all(0 <= t < tok.vocab_size for t in ids)
    assert len(ids) <= len(text.encode("utf-8"))


@given(st.text())
def test_chunks_join_back_and_hold_at_most_a_leading_space(text: str) -> None:
    chunks = split_chunks(text)
    assert "".join(chunks) == text
    for chunk in chunks:
        body = chunk[1:] if chunk.startswith(" ") else chunk
        assert chunk.isspace() or not any(c.isspace() for c in body)


def test_a_line_break_is_the_end_token_and_the_text_end_is_not() -> None:
    tok = bundled_tokenizer()
    a, b = tok.encode("a"), tok.encode("b")
    assert tok.encode("a\nb") == [*a, tok.end_token, *b]
    assert tok.encode("\n\n") == [tok.end_token, tok.end_token]
    assert tok.end_token not in tok.encode("<end>")
    assert tok.decode([tok.end_token]) == "\n"


def test_unseen_words_fall_back_to_smaller_pieces_and_bytes() -> None:
    tok = bundled_tokenizer()
    ids = tok.encode("Zyzzyva ✓")
    assert [tok.piece(t) for t in ids][-4:] == ["▁", "<0xE2>", "<0x9C>", "<0x93>"]
    assert tok.decode(ids) == "Zyzzyva ✓"


def test_decoding_half_a_character_shows_a_replacement_character() -> None:
    tok = bundled_tokenizer()
    assert tok.decode([0xC3]) == "\ufffd"
    assert tok.decode([0xC3, 0xA9]) == "é"


@given(st.lists(st.integers(0, 255), max_size=12))
@example([0xE2, 0x80, 0x61, 0x94])
def test_shown_bytes_give_back_the_exact_bytes(ids: list[int]) -> None:
    """With show_bytes, no U+FFFD: each byte outside a whole character reads <0xNN>, so turning every <0xNN> back
    into its byte gives exactly the tokens' bytes; text that decodes cleanly is the same either way."""
    tok = bundled_tokenizer()
    shown = tok.decode(ids, show_bytes=True)
    assert "\ufffd" not in shown
    parts = re.split("<0x([0-9A-F]{2})>", shown)  # text, byte, text, byte, ..., text
    back = b"".join(bytes([int(p, 16)]) if i % 2 else p.encode("utf-8") for i, p in enumerate(parts))
    assert back == b"".join(tok.token_bytes(t) for t in ids)
    if "\ufffd" not in tok.decode(ids):
        assert shown == tok.decode(ids)


def test_bad_input_names_the_argument() -> None:
    tok = bundled_tokenizer()
    with pytest.raises(TypeError, match="text"):
        tok.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text must be valid Unicode: a lone surrogate at index 1"):
        tok.encode("a\ud800")
    with pytest.raises(ValueError, match=r"ids\[1\] must be a token id in 0\.\.1023"):
        tok.decode([5, 1024])
    with pytest.raises(TypeError, match=r"ids\[0\]"):
        tok.decode([True])
    with pytest.raises(TypeError, match="token"):
        tok.piece("a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="vocab_size"):
        train("abc", vocab_size=256)
    with pytest.raises(TypeError, match="vocab_size"):
        train("abc", vocab_size=300.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text"):
        train(["abc"], vocab_size=300)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"merges\[1\]"):
        Tokenizer([(97, 98), (257, 97)])
    with pytest.raises(TypeError, match=r"merges\[0\]"):
        Tokenizer([[97, 98]])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="repeat"):
        Tokenizer([(97, 98), (97, 98)])
    with pytest.raises(ValueError, match="line 2"):
        Tokenizer.from_text("# header\n97 x\n")
    with pytest.raises(TypeError, match=r"merges\[0\] must hold ints"):
        Tokenizer([(97, "b")])  # type: ignore[list-item]
