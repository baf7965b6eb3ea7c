"""Model pairs: the exact agreement rate, the draft-quality knob, and the n-gram models on the bundled text."""

from __future__ import annotations

import itertools
import math
import operator
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from importlib import resources

import pytest

from specdec_core.distributions import acceptance_rate, total_variation
from specdec_core.models import (
    QUALITY_WORDS,
    TEXT_RESOURCE,
    FixedModel,
    MarkovModel,
    MixtureModel,
    NGramModel,
    Pair,
    agreement_distributions,
    agreement_pair,
    ngram_pair,
    quality_pair,
)
from specdec_core.tokenizer import bundled_tokenizer, training_paragraphs

# (a) Agreement rate --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vocab_size", [2, 3, 8, 9, 33])
def test_agreement_rate_is_exact_in_fractions(vocab_size: int) -> None:
    for alpha in [Fraction(k, 12) for k in range(13)] + [Fraction(1, 7), Fraction(999, 1000)]:
        p, q = agreement_distributions(alpha, vocab_size)
        assert sum(p) == 1 and sum(q) == 1
        assert min(p) >= 0 and min(q) >= 0
        assert sum(min(x, y) for x, y in zip(p, q, strict=True)) == alpha


@pytest.mark.parametrize("vocab_size", [2, 5, 8, 64])
def test_agreement_rate_holds_in_floats_within_1e_12(vocab_size: int) -> None:
    for k in range(101):
        alpha = k / 100
        pair = agreement_pair(alpha, vocab_size)
        p, q = pair.target.probs([]), pair.draft.probs([])
        assert abs(math.fsum(p) - 1) < 1e-12 and abs(math.fsum(q) - 1) < 1e-12
        assert abs(acceptance_rate(p, q) - alpha) < 1e-12


def test_agreement_pair_positions_are_iid() -> None:
    pair = agreement_pair(0.6)
    assert pair.target.probs([]) == pair.target.probs([1, 2, 3]) == pair.target.probs([7])
    assert pair.draft.probs([]) == pair.draft.probs([0, 0])
    assert pair.end_token is None and len(pair.vocab) == 8


def test_agreement_extremes_are_identical_and_disjoint() -> None:
    p, q = agreement_distributions(1.0)
    assert p == q
    p, q = agreement_distributions(0.0)
    assert all(min(x, y) == 0 for x, y in zip(p, q, strict=True))


def test_agreement_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="alpha"):
        agreement_pair(1.5)
    with pytest.raises(ValueError, match="alpha"):
        agreement_distributions(Fraction(-1, 2))
    with pytest.raises(ValueError, match="alpha"):
        agreement_pair(float("nan"))
    with pytest.raises(ValueError, match="vocab_size"):
        agreement_pair(0.5, vocab_size=1)
    with pytest.raises(TypeError, match="vocab_size"):
        agreement_pair(0.5, vocab_size=4.0)  # type: ignore[arg-type]


# (b) Draft quality ---------------------------------------------------------------------------------------------


def _mean_acceptance(quality: float) -> float:
    pair = quality_pair(quality)
    contexts: list[list[int]] = [[], *([t] for t in range(len(pair.vocab)))]
    return sum(acceptance_rate(pair.target.probs(c), pair.draft.probs(c)) for c in contexts) / len(contexts)


def test_quality_zero_is_a_random_guesser_and_one_is_the_target() -> None:
    guesser, perfect = quality_pair(0.0), quality_pair(1.0)
    for context in ([], [0], [8], [23]):
        assert guesser.draft.probs(context) == pytest.approx([1 / 24] * 24, abs=1e-15)
        assert perfect.draft.probs(context) == perfect.target.probs(context)
    assert _mean_acceptance(1.0) == pytest.approx(1.0, abs=1e-12)


def test_acceptance_grows_monotonically_with_quality() -> None:
    grid = [k / 40 for k in range(41)]
    pairs = [quality_pair(x) for x in grid]
    for context in [[], *([t] for t in range(24))]:
        rates = [acceptance_rate(pair.target.probs(context), pair.draft.probs(context)) for pair in pairs]
        assert all(b >= a - 1e-15 for a, b in itertools.pairwise(rates))
    means = [_mean_acceptance(x) for x in grid]
    assert all(b > a for a, b in itertools.pairwise(means))
    assert means[0] < 0.35 and means[-1] == pytest.approx(1.0)


def test_quality_target_changes_with_context_and_reads_as_words() -> None:
    pair = quality_pair(0.5)
    rows = [tuple(pair.target.probs([t])) for t in range(24)]
    assert len(set(rows)) >= 15  # most previous words give a distribution of their own
    assert all(abs(math.fsum(r) - 1) < 1e-12 for r in rows)
    assert all(w.isalpha() or w == "." for w in QUALITY_WORDS) and len(set(QUALITY_WORDS)) == 24
    # After "the" comes an adjective or a noun, never a verb.
    after_the = pair.target.probs(pair.encode("the"))
    assert after_the[QUALITY_WORDS.index("chases")] == 0.0 and after_the[QUALITY_WORDS.index("cat")] > 0


def test_quality_rejects_out_of_range() -> None:
    with pytest.raises(ValueError, match="quality"):
        quality_pair(-0.1)
    with pytest.raises(ValueError, match="quality"):
        quality_pair(1.01)


class _LengthModel:
    """A model whose row depends on the whole context (its length), and that declares no context size."""

    def probs(self, context: Sequence[int]) -> list[float]:
        return [1.0, 0.0] if len(context) % 2 == 0 else [0.0, 1.0]


def test_mixture_over_the_trigram_keeps_contexts_that_share_the_last_token_apart() -> None:
    """The contexts "it is" and "he is" end in the same token, but the trigram gives them different rows."""
    pair = ngram_pair()
    size = len(pair.vocab)
    mixture = MixtureModel(pair.target, 0.5, size)
    it_is, he_is = pair.encode("Then it is"), pair.encode("Then he is")
    assert it_is[-1] == he_is[-1] and pair.target.probs(it_is) != pair.target.probs(he_is)
    for context in (it_is, he_is, it_is, he_is):  # twice each: the second call is served from the cache
        expected = [0.5 * x + 0.5 / size for x in pair.target.probs(context)]
        assert mixture.probs(context) == pytest.approx(expected, abs=1e-15)


def test_mixture_over_a_model_without_a_context_size_keys_on_the_whole_context() -> None:
    mixture = MixtureModel(_LengthModel(), 1.0, 2)
    assert [mixture.probs([0] * n) for n in range(4)] == [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    assert mixture.probs([1, 1, 1]) == [0.0, 1.0]


# Pair plumbing -------------------------------------------------------------------------------------------------


def test_pair_encode_decode_and_errors() -> None:
    pair = quality_pair(0.5)
    ids = pair.encode("The clever fox sees a dog.")
    assert pair.decode(ids) == "the clever fox sees a dog."
    with pytest.raises(ValueError, match="outside the vocabulary"):
        pair.encode("the unicorn")
    with pytest.raises(TypeError, match="text"):
        pair.encode(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ids\[1\]"):
        pair.decode([0, 99])
    with pytest.raises(TypeError, match=r"ids\[0\]"):
        pair.decode(["the"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="vocab"):
        Pair(FixedModel([1.0]), FixedModel([1.0]), [])
    with pytest.raises(ValueError, match="end_token"):
        Pair(FixedModel([1.0]), FixedModel([1.0]), ["a"], end_token=1)
    with pytest.raises(ValueError, match="square"):
        MarkovModel([[1.0, 0.0]], [1.0, 0.0])


def test_word_pairs_read_lower_cased_words_and_sentence_punctuation() -> None:
    pair = quality_pair(0.5)
    # Quotes, dashes and the underscores of italics are not words; case does not matter.
    assert pair.decode(pair.encode('"The FOX"--sees _a_ dog.')) == "the fox sees a dog."
    rows = [[0.5, 0.5], [0.5, 0.5]]
    ends = Pair(MarkovModel(rows, [0.5, 0.5]), MarkovModel(rows, [0.5, 0.5]), ["yes", "."], end_token=1)
    assert ends.decode([0, 1, 0]) == "yes\nyes"


# (c) n-gram models ---------------------------------------------------------------------------------------------


def test_bundled_text_is_small_and_readable_from_the_package() -> None:
    data = resources.files("specdec_core").joinpath(TEXT_RESOURCE).read_bytes()
    assert 100_000 < len(data) <= 300_000
    assert data.decode("utf-8").startswith("PRIDE AND PREJUDICE")


def test_ngram_vocabulary_is_the_tokenizers_and_nothing_is_unknown() -> None:
    pair = ngram_pair()
    tokenizer = bundled_tokenizer()
    assert pair.vocab == tokenizer.pieces() and len(pair.vocab) == 1024
    assert pair.end_token == tokenizer.end_token == 1023 and pair.vocab[-1] == "<end>"
    assert "<unk>" not in pair.vocab
    for text in ["It is a truth universally acknowledged.", "Zyzzyva, naïve café 🙂", "two\nparagraphs", ""]:
        assert pair.decode(pair.encode(text)) == text
    assert pair.decode([pair.end_token]) == "\n"
    with pytest.raises(ValueError, match=r"ids\[0\] must be a token id in 0\.\.1023"):
        pair.decode([1024])


def test_ngram_rows_are_distributions_for_target_and_draft() -> None:
    pair = ngram_pair()
    size = len(pair.vocab)
    contexts = [[], [pair.end_token], pair.encode("It is a"), pair.encode("Mr"), pair.encode("said Elizabeth,")]
    contexts += [[a, b] for a in range(0, size, 97) for b in range(0, size, 131)]
    for context in contexts:
        for model in (pair.target, pair.draft):
            row = model.probs(context)
            assert len(row) == size
            assert abs(math.fsum(row) - 1) < 1e-9
            assert min(row) > 0  # smoothing leaves every token possible


def test_empty_context_is_the_start_of_a_paragraph() -> None:
    pair = ngram_pair()
    end = pair.end_token
    assert end is not None
    assert pair.target.probs([]) == pair.target.probs([end, end])
    assert pair.draft.probs([]) == pair.draft.probs([end])


def test_empty_context_row_follows_how_paragraphs_begin() -> None:
    """Every training paragraph starts after the context (end, end), so the target's row there is the
    interpolated Kneser-Ney row over the paragraph-first tokens: with n paragraphs, c(w) of them starting with
    w and T distinct first tokens, row(w) = max(c(w) - D, 0) / n + lam * lower(w), lam = D * T / n, D = 0.75.
    Its distance from the empirical law c(w) / n is then at most lam: the row loses D / n on each seen token
    and gains lam * lower(w) >= 0 on every token, and the gains sum to lam. If (end, end) preceded only the
    novel's first paragraph, the row would put 0.25 + 0.75 * lower on the novel's first token instead."""
    pair = ngram_pair()
    firsts = Counter(pair.encode(paragraph)[0] for paragraph in training_paragraphs())
    n = sum(firsts.values())
    row = pair.target.probs([])
    empirical = [firsts[token] / n for token in range(len(pair.vocab))]
    lam = 0.75 * len(firsts) / n
    assert n > 500 and lam < 0.2
    assert total_variation(row, empirical) <= lam + 1e-12
    (novel_first,) = pair.encode(training_paragraphs()[0])[:1]
    assert row[novel_first] <= empirical[novel_first] + lam


def test_trigram_target_uses_two_words_and_bigram_draft_one() -> None:
    pair = ngram_pair()
    (a,) = pair.encode(" a")
    (mr,) = pair.encode("Mr")
    (said,) = pair.encode(" said")
    assert pair.target.probs([said, a]) != pair.target.probs([mr, a])
    assert pair.draft.probs([said, a]) == pair.draft.probs([mr, a])
    # Within a sentence " Mr" is nearly always followed by "." in the text; the target knows it. At the start
    # of a paragraph "Mr" is also the first piece of "Mrs" (no merge made "Mrs" one token).
    (dot,) = pair.encode(".")
    (s,) = pair.encode("s")
    assert pair.target.probs(pair.encode("said Mr"))[dot] > 0.9
    assert pair.target.probs([mr])[dot] + pair.target.probs([mr])[s] > 0.9


def test_draft_is_weaker_than_target_on_the_text() -> None:
    """Average log-likelihood per token of 1,500 tokens of the training text: the trigram target must
    fit it better than the bigram draft (a sanity check that the draft is the weaker model)."""
    pair = ngram_pair()
    ids = pair.encode("\n".join(training_paragraphs()[10:60]))[:1500]
    assert len(ids) == 1500
    target = draft = 0.0
    for i in range(2, len(ids)):
        target += math.log(pair.target.probs(ids[:i])[ids[i]])
        draft += math.log(pair.draft.probs(ids[:i])[ids[i]])
    assert target > draft
    mean_alpha = (
        sum(acceptance_rate(pair.target.probs(ids[:i]), pair.draft.probs(ids[:i])) for i in range(2, 200)) / 198
    )
    assert 0.3 < mean_alpha < 0.99


def test_temperature_sharpens_and_flattens() -> None:
    context = ngram_pair().encode("She was")
    plain = ngram_pair().target.probs(context)
    cold = ngram_pair(temperature=0.5).target.probs(context)
    hot = ngram_pair(temperature=2.0).target.probs(context)
    greedy = ngram_pair(temperature=0.0).target.probs(context)
    assert max(cold) > max(plain) > max(hot)
    best = plain.index(max(plain))
    assert greedy[best] == 1.0 and sum(greedy) == 1.0
    assert total_variation(ngram_pair(temperature=1.0).target.probs(context), plain) == 0.0


def test_top_k_keeps_exactly_k_tokens() -> None:
    context = ngram_pair().encode("I am")
    plain = ngram_pair().target.probs(context)
    row = ngram_pair(top_k=5).target.probs(context)
    kept = [i for i, x in enumerate(row) if x > 0]
    assert kept == sorted(sorted(range(len(plain)), key=lambda i: -plain[i])[:5])
    assert abs(math.fsum(row) - 1) < 1e-9
    # Kept tokens keep their relative odds.
    a, b = kept[0], kept[1]
    assert row[a] / row[b] == pytest.approx(plain[a] / plain[b])


def test_top_p_keeps_the_smallest_nucleus() -> None:
    context = ngram_pair().encode("He")
    plain = ngram_pair().target.probs(context)
    row = ngram_pair(top_p=0.5).target.probs(context)
    kept = {i for i, x in enumerate(row) if x > 0}
    order = sorted(range(len(plain)), key=lambda i: -plain[i])
    mass = [math.fsum(plain[i] for i in order[: k + 1]) for k in range(len(order))]
    needed = next(k for k, m in enumerate(mass) if m >= 0.5) + 1
    assert kept == set(order[:needed])
    assert abs(math.fsum(row) - 1) < 1e-9


def test_shaping_applies_to_both_models() -> None:
    pair = ngram_pair(top_k=3)
    context = pair.encode("Mrs")
    assert sum(1 for x in pair.target.probs(context) if x > 0) == 3
    assert sum(1 for x in pair.draft.probs(context) if x > 0) == 3


def test_ngram_rejects_bad_knobs_and_contexts() -> None:
    with pytest.raises(ValueError, match="temperature"):
        ngram_pair(temperature=-1.0)
    with pytest.raises(ValueError, match="top_k"):
        ngram_pair(top_k=-2)
    with pytest.raises(ValueError, match="top_p"):
        ngram_pair(top_p=0.0)
    with pytest.raises(ValueError, match="order"):
        NGramModel(4)
    with pytest.raises(ValueError, match="context"):
        ngram_pair().target.probs([5, 10_000])


def test_bigram_rows_are_cached_on_the_last_token_alone() -> None:
    """A bigram's row depends on the last token only, so contexts that share it share one cached row (a token
    tree drafts hundreds of contexts whose last tokens repeat); the trigram keeps the last two apart."""
    bigram, trigram = NGramModel(order=2, cache_size=8), NGramModel(order=3, cache_size=8)
    for model in (bigram, trigram):
        model.probs([5, 9])
        model.probs([6, 9])
    assert len(bigram._cache) == 1
    assert len(trigram._cache) == 2


@pytest.mark.parametrize("order", [1, 2])
def test_mixed_row_equals_the_weighted_sum_of_rows(order: int) -> None:
    """mixed_row(w) = sum_v w[v] * probs([v]) (the independent-heads drafter's chain step). For the unshaped bigram
    and unigram it is computed from the counts, not from the V = 1,024 rows; here the rows are summed directly,
    one correctly rounded math.fsum per token. Each side adds up to V + 1 float products of size <= 1, so they may
    differ by a few hundred units in the last place of 1.0 at most: 1e-12 bounds that with room, while a count
    dropped or mis-discounted moves an entry by at least 1 / (total count) ~ 1e-5."""
    model = NGramModel(order=order)
    size = len(model.vocab)
    rows = [model.probs([v]) for v in range(size)]
    peaked = model.probs([model.vocab.index("the")]) if "the" in model.vocab else rows[0]
    sparse = [0.0] * size
    sparse[3], sparse[40], sparse[size - 1] = 0.5, 0.25, 0.25
    for weights in (peaked, sparse):  # a whole row (every entry > 0, as in a chain) and three tokens
        expected = [math.fsum(map(operator.mul, weights, column)) for column in zip(*rows, strict=True)]
        got = model.mixed_row(weights)
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-12
        assert math.fsum(got) == pytest.approx(1.0, abs=1e-12)
