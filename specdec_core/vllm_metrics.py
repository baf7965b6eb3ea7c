"""Read a vLLM server's speculative-decoding counters, fit the i.i.d. model to them and test it, recommend gamma.

Two inputs, both as vLLM v1 writes them (``vllm/v1/spec_decode/metrics.py``, read at commit ee4ceaae5953 of
vllm-project/vllm, in the 0.11.0 release's wheel and in the 0.29.0 source release; the Prometheus names and the log
wording below hold in all three):

- **Prometheus text** from ``/metrics``: the counters ``vllm:spec_decode_num_drafts``, ``..._num_draft_tokens``,
  ``..._num_accepted_tokens`` and ``..._num_accepted_tokens_per_pos`` (label ``position="j"``, j from 0). The Python
  client writes a counter's value as the sample ``NAME_total`` and its creation time as ``NAME_created``; the
  second is a timestamp, not a count, and is skipped. Every other label (``model_name``, ``engine``) is summed
  over, so a server with several engines reads as one. Counters are cumulative: one dump covers the server's whole
  life, two dumps (earlier, later) are differenced series by series.
- **The periodic log line** ``SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f
  tokens/s, Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, Per-position acceptance
  rate: %s, Avg Draft acceptance rate: %.1f%%`` (the per-position rates with three decimals). Fields are found by
  name, so a line without the throughputs reads too. The line has no count of drafts: it is rebuilt from the
  rounded figures (see ``parse_log``), so log counts are marked inexact. Several lines are summed.

The analysis (vocabulary of DESIGN.md; j is vLLM's 0-based position, N_j the drafts whose token j was accepted,
n the drafts):

- draft acceptance rate = accepted / draft tokens; tokens per target pass = 1 + accepted / n;
- per-position acceptance N_j / n, and conditional acceptance N_j / N_(j-1) (N_(-1) = n): alpha at that depth;
- the i.i.d. fit of alpha by maximum likelihood (``alpha_mle``);
- a trend test of the conditional rates against depth (``depth_test``);
- expected tokens per pass for every gamma, under the i.i.d. fit (``theory.expected_tokens``) and under the measured
  profile, and the gamma that is fastest (``best_gamma``) under a round-cost model: the paper's gamma c + 1 at the
  reader's draft cost c (``paper_round_cost``), or the roofline of ``costs.py`` for chosen hardware, models, batch
  size and context (``roofline_round_cost``).

Non-goals: reading histograms or timings (c, or the hardware and models, must come from the reader), per-request
metrics, other servers' formats.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from . import costs, theory
from .distributions import check_cost, check_gamma

__all__ = [
    "Analysis",
    "Counts",
    "DepthTest",
    "alpha_mle",
    "analyse",
    "best_gamma",
    "depth_test",
    "iid_tokens",
    "paper_round_cost",
    "parse_log",
    "parse_prometheus",
    "profile_tokens",
    "read_counts",
    "roofline_round_cost",
]

_GAMMA = "\N{GREEK SMALL LETTER GAMMA}"

#: The four counters, by their Prometheus family name (the sample adds ``_total``).
COUNTERS = (
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos",
)
DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POS = COUNTERS
#: What starts vLLM's periodic log line.
LOG_MARK = "SpecDecoding metrics:"
#: The longest text accepted: a /metrics page with histograms is a few hundred kB.
MAX_TEXT = 5_000_000
#: More draft positions than this is not a vLLM configuration (DESIGN.md caps gamma at 64).
MAX_POSITIONS = 64

# (family, labels sorted by name) -> value
SeriesKey = tuple[str, tuple[tuple[str, str], ...]]
Series = dict[SeriesKey, float]


@dataclass(frozen=True)
class Counts:
    """Counter totals over one window, summed over engines."""

    drafts: int  # n: draft rounds
    draft_tokens: int  # draft tokens proposed (gamma n when every draft is full length)
    accepted: int  # draft tokens accepted
    per_position: tuple[int, ...]  # [gamma]: N_j, drafts whose token at 0-based position j was accepted
    source: str  # "one dump", "difference of two dumps" or "log"
    series: int = 1  # label sets summed (engines), or log lines
    exact: bool = True  # False when rebuilt from a log line's rounded figures
    notes: tuple[str, ...] = ()

    @property
    def gamma(self) -> int:
        return len(self.per_position)


# --- Input A: Prometheus text ------------------------------------------------------------------------------------

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"({_NAME})\s*(?:\{{(.*)\}})?\s+(\S+)(?:\s+\S+)?")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def _clip(text: str, size: int = 60) -> str:
    return text if len(text) <= size else text[: size - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _family(metric: str) -> str | None:
    """The counter a sample belongs to, or None (unrelated metrics, and ``_created`` timestamps)."""
    if metric.endswith("_total") and metric[: -len("_total")] in COUNTERS:
        return metric[: -len("_total")]
    # A bare family name is what some relabelling proxies write for a counter; it is still the count.
    return metric if metric in COUNTERS else None


def _labels(text: str, name: str, number: int) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    at = 0
    while at < len(text.rstrip()):
        match = _LABEL.match(text, at)
        if match is None:
            raise ValueError(f"{name}: line {number} has labels that are not Prometheus text ({_clip(text)!r})")
        found[match.group(1)] = match.group(2)
        at = match.end()
    return tuple(sorted(found.items()))


def _count(text: str, name: str, number: int, metric: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise ValueError(f"{name}: line {number}: {metric} is {text}, not a count (a whole number, 0 or more)")
    return value


def parse_prometheus(text: str, name: str = "metrics") -> Series:
    """The speculative-decoding counters of one /metrics dump, series by series.

    ``# HELP`` / ``# TYPE`` lines, blank lines and every other metric are skipped; a line that is not a
    Prometheus sample at all is an error naming its line number, and so is a series given twice.

    >>> dump = 'vllm:spec_decode_num_drafts_total{engine="0"} 10.0\\nvllm:spec_decode_num_drafts_created 1.7e9'
    >>> parse_prometheus(dump)
    {('vllm:spec_decode_num_drafts', (('engine', '0'),)): 10.0}
    """
    found: Series = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.fullmatch(line)
        if match is None:
            raise ValueError(
                f"{name}: line {number} is not Prometheus text ({_clip(line)!r}); paste vLLM's /metrics output "
                f"or its '{LOG_MARK}' log line"
            )
        metric, labels, value = match.groups()
        try:  # every sample's value, so that prose ("hello world") is not taken for an unrelated metric
            float(value)
        except ValueError:
            raise ValueError(f"{name}: line {number} is not Prometheus text: {value!r} is not a number") from None
        family = _family(metric)
        if family is None:
            continue
        key = (family, _labels(labels or "", name, number))
        if key in found:
            raise ValueError(f"{name}: line {number} repeats the series {_clip(metric + '{' + (labels or ''))}}}")
        found[key] = _count(value, name, number, metric)
    return found


def _positions(values: dict[str, float], where: str, name: str) -> list[float]:
    """Per-position values in position order, refusing labels that are not 0, 1, 2, ... without gaps."""
    if not all(p.isdigit() for p in values):
        bad = next(p for p in values if not p.isdigit())
        raise ValueError(f"{name}: {PER_POS}_total{where} has position {bad!r}, not a whole number")
    # "01" is no label vLLM writes, and beside "1" it would name one position twice.
    padded = [p for p in values if p != str(int(p))]
    if padded:
        raise ValueError(
            f"{name}: {PER_POS}_total{where} has position {padded[0]!r}; vLLM writes positions without leading "
            f"zeros ({str(int(padded[0]))!r})"
        )
    positions = sorted(int(p) for p in values)
    if positions != list(range(len(positions))):
        missing = sorted(set(range(positions[-1] + 1)) - set(positions))
        raise ValueError(
            f"{name}: the per-position series{where} has gaps: positions {', '.join(map(str, positions))} are "
            f"there, {', '.join(map(str, missing))} missing (vLLM writes every position from 0 to {_GAMMA} - 1)"
        )
    if len(positions) > MAX_POSITIONS:
        raise ValueError(f"{name}: {len(positions)} draft positions; at most {MAX_POSITIONS} are supported")
    return [values[str(p)] for p in positions]


Group = tuple[tuple[str, str], ...]


def _groups(series: Series, name: str) -> dict[Group, tuple[dict[str, float], dict[str, float]]]:
    """Series grouped by their labels other than ``position`` (one group per engine): the three totals by family,
    and the per-position counts by position label."""
    groups: dict[Group, tuple[dict[str, float], dict[str, float]]] = {}
    for (family, labels), value in series.items():
        totals, positions = groups.setdefault(tuple(item for item in labels if item[0] != "position"), ({}, {}))
        if family != PER_POS:
            totals[family] = value
        elif (position := dict(labels).get("position")) is None:
            raise ValueError(f"{name}: a {PER_POS}_total sample has no position label")
        else:
            positions[position] = value
    return groups


def _where(group: tuple[tuple[str, str], ...]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in group) + "}" if group else ""


def _series_counts(series: Series, name: str, source: str, window: bool = True) -> Counts:
    """Sum a dump's series over engines; every engine must carry all four counters and the same positions."""
    if not series:
        raise ValueError(
            f"{name} holds no vLLM speculative-decoding counters ({DRAFTS}_total and the others): was the server "
            "started with --speculative-config, and is this its /metrics page?"
        )
    present = {family for family, _ in series}
    missing = [f"{family}_total" for family in COUNTERS if family not in present]
    if missing:
        # vLLM's V0 engine (before 0.10.0) and early V1 releases export accepted and draft tokens, not per draft.
        rate = ""
        if DRAFT_TOKENS in present and ACCEPTED in present:
            tokens = sum(v for (f, _), v in series.items() if f == DRAFT_TOKENS)
            accepted = sum(v for (f, _), v in series.items() if f == ACCEPTED)
            if tokens > 0:
                rate = (
                    f" Its draft acceptance rate, accepted / draft tokens = {accepted / tokens:.3f}, goes into the "
                    "calculator above."
                )
        raise ValueError(
            f"{name} lacks {', '.join(missing)}: it comes from a vLLM that counts no drafts or positions (the V0 "
            "engine, before 0.10.0, or an early V1), and the depth analysis needs them; vLLM 0.11.0 exports all "
            f"four.{rate}"
        )
    models = sorted({value for _, labels in series for key, value in labels if key == "model_name"})
    if len(models) > 1:
        raise ValueError(f"{name} mixes several models ({', '.join(models)}): paste the lines of one model")
    totals = [0.0, 0.0, 0.0]
    per_position: list[float] | None = None
    groups = _groups(series, name)
    for group, (values, positions) in groups.items():
        absent = [f"{family}_total" for family in COUNTERS[:3] if family not in values]
        absent += [] if positions else [f"{PER_POS}_total"]
        if absent:
            raise ValueError(f"{name}: the series {_where(group) or 'without labels'} lack {', '.join(absent)}")
        for i, family in enumerate(COUNTERS[:3]):
            totals[i] += values[family]
        here = _positions(positions, _where(group), name)
        if per_position is not None and len(here) != len(per_position):
            raise ValueError(
                f"{name}: engines report different numbers of draft positions ({len(here)} and "
                f"{len(per_position)}); paste one configuration at a time"
            )
        per_position = here if per_position is None else [a + b for a, b in zip(per_position, here, strict=True)]
    if per_position is None:  # unreachable: an empty series was refused above; keeps mypy and -O honest
        raise ValueError(f"{name} holds no per-position counters")
    counts = Counts(
        int(totals[0]), int(totals[1]), int(totals[2]), tuple(int(v) for v in per_position), source, len(groups)
    )
    return _checked(counts, name, window)


def _checked(counts: Counts, name: str, window: bool = True) -> Counts:
    """The identities vLLM's counters obey (each accepted token is counted at its position, positions in order)."""
    n, per = counts.drafts, counts.per_position
    if n == 0 and window:  # an earlier dump of a fresh server may be all zeros; the window analysed may not
        raise ValueError(
            f"{name}: the counters show no drafts, so there is nothing to analyse (no request was "
            "speculated in this window)"
        )
    if counts.exact and sum(per) != counts.accepted:
        raise ValueError(
            f"{name}: the per-position counts sum to {sum(per)}, not to the {counts.accepted} accepted "
            "tokens; were the lines taken from one scrape?"
        )
    if any(later > earlier for earlier, later in zip((n, *per), per, strict=False)):
        raise ValueError(
            f"{name}: accepted counts rise with position ({', '.join(map(str, per))} of {n} drafts); "
            "a token is accepted only after every earlier one, so no position can count more than the one before"
        )
    if not counts.accepted <= counts.draft_tokens <= counts.gamma * n:
        raise ValueError(
            f"{name}: {counts.draft_tokens} draft tokens is impossible with {counts.accepted} accepted "
            f"and {n} drafts of at most {counts.gamma} tokens"
        )
    return counts


def _difference(before: Series, after: Series) -> Series:
    """later - earlier, series by series: a counter that shrinks means a restart (or the dumps swapped)."""
    only = sorted(set(before) ^ set(after))
    if only:
        family, labels = only[0]
        which = "earlier" if (family, labels) in before else "later"
        raise ValueError(
            f"later: the series {family}_total{_where(labels)} is in the {which} dump only; paste two "
            "dumps of the same server, earlier first"
        )
    delta: Series = {}
    for key, value in after.items():
        if value < before[key]:
            family, labels = key
            position = dict(labels).get("position")
            what = f"{family}_total{_where(tuple(i for i in labels if i[0] != 'position'))}"
            what += f" at position {position}" if position is not None else ""
            raise ValueError(
                f"later: the counter {what} went backwards ({before[key]:.0f} earlier, {value:.0f} "
                "later); was the server restarted between the dumps, or are they in the wrong order?"
            )
        delta[key] = value - before[key]
    return delta


# --- Input B: the log line ---------------------------------------------------------------------------------------

#: The V0 engine's periodic line ("Speculative metrics: Draft acceptance rate: 0.604, System efficiency: ...").
_V0_LOG = re.compile(r"Speculative metrics: Draft acceptance rate: (\d+(?:\.\d+)?)")
_FIELDS = {
    "length": re.compile(r"Mean acceptance length: (\d+(?:\.\d+)?)"),
    "accepted": re.compile(r"\bAccepted: (-?\d+) tokens"),  # a sign, to say a negative count is one
    "drafted": re.compile(r"\bDrafted: (-?\d+) tokens"),
    "rates": re.compile(r"Per-position acceptance rate: (\d+(?:\.\d+)?(?:, \d+(?:\.\d+)?)*)"),
    "rate": re.compile(r"Avg Draft acceptance rate: (\d+(?:\.\d+)?|nan)%"),
}
#: Half a unit in the last place of vLLM's format: rates %.3f, mean acceptance length %.2f, percentage %.1f.
_RATE_ULP, _LENGTH_ULP, _PERCENT_ULP = 0.0005, 0.005, 0.05


def _log_drafts(accepted: int, drafted: int, rates: list[float], length: float | None, where: str) -> list[int]:
    """Every whole number of drafts the rounded figures allow: accepted / n must match the sum of the per-position
    rates (each within half a unit of %.3f) and the mean acceptance length minus 1 (within half of %.2f), and n
    drafts of 1 to gamma tokens must hold the drafted tokens."""
    gamma, total = len(rates), sum(rates)
    low, high = drafted / gamma, float(drafted)
    if accepted:
        spread = gamma * _RATE_ULP
        low, high = max(low, accepted / (total + spread)), min(high, accepted / max(total - spread, 1e-12))
        if length is not None:
            low = max(low, accepted / (length - 1 + _LENGTH_ULP))
            high = min(high, accepted / max(length - 1 - _LENGTH_ULP, 1e-12))
    choices = list(range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1))
    if not choices:
        raise ValueError(
            f"metrics: the figures of the log line{where} disagree (accepted {accepted}, drafted "
            f"{drafted}, per-position rates summing to {total:.3f}); was it edited?"
        )
    return choices


def _log_line(line: str, where: str) -> Counts:
    body = line[line.index(LOG_MARK) + len(LOG_MARK) :]
    found = {key: pattern.search(body) for key, pattern in _FIELDS.items()}
    for key, label in (("accepted", "Accepted"), ("drafted", "Drafted")):
        if found[key] is None:
            raise ValueError(f"metrics: the log line{where} has no '{label}' field; paste the whole line")
    if found["rates"] is None:
        accepted, drafted = int(found["accepted"].group(1)), int(found["drafted"].group(1))  # type: ignore[union-attr]
        message = (
            f"metrics: the log line{where} has no 'Per-position acceptance rate' field, which an earlier vLLM's "
            "line lacks and the depth analysis needs (vLLM 0.11.0 logs it)"
        )
        if drafted > 0:
            message += (
                f". Its draft acceptance rate, {accepted} / {drafted} = {accepted / drafted:.3f}, goes into the "
                "calculator above"
            )
        raise ValueError(message)
    accepted, drafted = int(found["accepted"].group(1)), int(found["drafted"].group(1))  # type: ignore[union-attr]
    for label, value in (("Accepted", accepted), ("Drafted", drafted)):
        if value < 0:
            raise ValueError(f"metrics: the log line{where} has '{label}: {value} tokens', a negative count")
    rates = [float(r) for r in found["rates"].group(1).split(", ")]
    if drafted == 0:
        raise ValueError(f"metrics: the log line{where} shows no drafted tokens, so there is nothing to analyse")
    if len(rates) > MAX_POSITIONS:
        raise ValueError(
            f"metrics: the log line{where} gives {len(rates)} per-position rates, more than the {MAX_POSITIONS} "
            "draft positions this page reads"
        )
    if any(r > 1 for r in rates):
        raise ValueError(f"metrics: the per-position rates of the log line{where} are not acceptance rates")
    percent = found["rate"].group(1) if found["rate"] else None
    if percent is not None and percent != "nan" and abs(float(percent) - 100 * accepted / drafted) > _PERCENT_ULP:
        raise ValueError(
            f"metrics: the log line{where} says {percent}% accepted, but {accepted} of {drafted} is "
            f"{100 * accepted / drafted:.1f}%; was it edited?"
        )
    length = float(found["length"].group(1)) if found["length"] else None
    choices = _log_drafts(accepted, drafted, rates, length, where)
    # Full-length drafts (gamma tokens each) are vLLM's case for draft models, EAGLE and MTP: n = drafted / gamma.
    full = drafted // len(rates) if drafted % len(rates) == 0 else None
    n = full if full in choices else choices[len(choices) // 2]
    note = (
        ()
        if full in choices
        else (
            f"drafts rebuilt from rounded figures as {n} (anything from {choices[0]} to "
            f"{choices[-1]} fits the line{where})",
        )
    )
    per = tuple(round(r * n) for r in rates)
    return Counts(n, drafted, accepted, per, "log", 1, exact=False, notes=note)


def parse_log(text: str) -> Counts:
    """Counts from vLLM's "SpecDecoding metrics" log lines (each covers one logging interval; several are summed).

    The line gives accepted and drafted tokens exactly and the per-position acceptance rates N_j / n to three
    decimals, but not n. n is taken as drafted / gamma when that fits every rounded figure (every draft full length);
    otherwise as the middle of the range that fits, and a note says so. N_j is then round(rate_j n).

    >>> line = ("INFO 06-01 12:00:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 3.36, "
    ...         "Accepted throughput: 236.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: 2360 tokens, "
    ...         "Drafted: 4000 tokens, Per-position acceptance rate: 0.800, 0.640, 0.512, 0.408, "
    ...         "Avg Draft acceptance rate: 59.0%")
    >>> counts = parse_log(line)
    >>> counts.drafts, counts.per_position
    (1000, (800, 640, 512, 408))
    """
    lines = [line for line in text.splitlines() if LOG_MARK in line]
    if not lines:
        raise ValueError(f"metrics: no '{LOG_MARK}' log line found")
    parts = [_log_line(line, f" {i}" if len(lines) > 1 else "") for i, line in enumerate(lines, 1)]
    if len({part.gamma for part in parts}) > 1:
        raise ValueError(
            "metrics: the log lines report different numbers of draft positions; paste lines of one configuration"
        )
    counts = Counts(
        sum(p.drafts for p in parts),
        sum(p.draft_tokens for p in parts),
        sum(p.accepted for p in parts),
        tuple(map(sum, zip(*(p.per_position for p in parts), strict=True))),
        "log",
        len(parts),
        exact=False,
        notes=tuple(note for p in parts for note in p.notes),
    )
    return _checked(counts, "metrics")


def read_counts(metrics: str, later: str = "") -> Counts:
    """Counts from what a reader pastes: a /metrics dump (and optionally a later one, to difference) or log lines.

    Raises ``ValueError`` with a message for the reader on anything it cannot read without guessing.
    """
    for name, text in (("metrics", metrics), ("later", later)):
        if not isinstance(text, str):
            raise TypeError(f"{name} must be a string, got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"{name} must be at most {MAX_TEXT:,} characters (got {len(text):,})")
    if not metrics.strip():
        raise ValueError(f"metrics is empty: paste vLLM's /metrics output or its '{LOG_MARK}' log line")
    if LOG_MARK in later:
        raise ValueError(
            "later: the second area takes a later /metrics dump; log lines go in the first area, where "
            "several are summed"
        )
    if LOG_MARK in metrics:
        if later.strip():
            raise ValueError("later: a log line already covers one interval; leave the second area empty")
        if any(line.strip().startswith("vllm:spec_decode") for line in metrics.splitlines()):
            raise ValueError(
                "metrics holds both log lines and /metrics samples: paste one or the other (a dump, or log lines)"
            )
        return parse_log(metrics)
    v0 = _V0_LOG.search(metrics)
    if v0:
        raise ValueError(
            f"metrics: this is the log line of vLLM's V0 engine (before 0.10.0), with no per-draft or per-position "
            f"counts, which the depth analysis needs. Its draft acceptance rate, {v0.group(1)}, goes into the "
            "calculator above"
        )
    before = parse_prometheus(metrics, "metrics")
    if not later.strip():
        return _series_counts(before, "metrics", "one dump")
    # Each dump must make sense alone before their difference is taken.
    _series_counts(before, "metrics", "one dump", window=False)
    after = parse_prometheus(later, "later")
    _series_counts(after, "later", "one dump", window=False)
    delta = _difference(before, after)
    return _series_counts(delta, "the difference of the two dumps", "difference of two dumps")


# --- The analysis ------------------------------------------------------------------------------------------------


def alpha_mle(counts: Counts) -> float:
    """The maximum-likelihood alpha of the i.i.d. model (Leviathan et al. 2023, Section 3.1) from the counters.

    Under that model every verified draft token is an independent Bernoulli(alpha) trial, and a round stops at
    its first rejection or after gamma acceptances. The likelihood is alpha^S (1 - alpha)^F, with S = accepted
    tokens and F = rejections = drafts that did not accept all gamma = n - N_(gamma-1), so the estimate is
    S / (S + F): accepted over *verified* draft tokens. It uses every count (S and F are sufficient statistics),
    whereas accepted / drafted (the draft acceptance rate) also counts the drafts after a rejection, which were
    never checked, and so reads low; inverting tokens per pass instead matches one moment only.

    >>> alpha_mle(Counts(1000, 4000, 2360, (800, 640, 512, 408), "one dump"))  # 2360 / (2360 + 592)
    0.7994579945799458
    """
    accepted = sum(counts.per_position)
    rejections = counts.drafts - counts.per_position[-1]
    return accepted / (accepted + rejections) if accepted + rejections else 0.0


@dataclass(frozen=True)
class DepthTest:
    """Does conditional acceptance change with depth? The Cochran-Armitage test for a trend in proportions.

    At depth j, ``trials[j]`` drafts reached position j (N_(j-1); n at j = 0) and ``successes[j]`` = N_j of them
    were accepted there. Under the i.i.d. model every depth has the same alpha, and the statistic
    z = sum_j (j - jbar)(N_j - T_j a) / sqrt(a (1 - a) sum_j T_j (j - jbar)^2), with a the pooled rate (the MLE alpha)
    and jbar the trial-weighted mean depth, is approximately standard normal. It is the score test for a logistic
    trend; the trials at successive depths are sequential, not independent, but the likelihood factorises by depth,
    so the score test holds as it does for independent groups. Two-sided: p = erfc(|z| / sqrt 2).
    """

    verdict: str  # "falls", "rises", "slight" (a trend under MIN_SLOPE), "flat" (no evidence of one), "unknown"
    z: float | None
    p_value: float | None
    slope: float | None  # trial-weighted least-squares change in conditional acceptance per position
    threshold: float
    trials: tuple[int, ...]
    successes: tuple[int, ...]
    pooled: float  # a, the pooled conditional rate = the MLE alpha
    mean_depth: float  # jbar, the centre of the fitted line


#: The least change in conditional acceptance per position that a verdict calls a trend. A server's counters hold
#: millions of drafts, and at such counts the test finds a change of 0.0005 per position, which moves no choice
#: of gamma: a significant trend smaller than this is "slight", and the i.i.d. model stands.
MIN_SLOPE = 0.01

#: How far past the measured gamma the recommendation searches. Beyond the measured positions the profile is the
#: fitted line carried on; a gamma far past them (32 from 300 drafts all accepted at gamma 3, 10 from one
#: position) is a guess, so the search stops two positions out, and the reader measures there.
EXTRAPOLATE = 2


def depth_test(counts: Counts, threshold: float = 0.01) -> DepthTest:
    """The trend test of ``DepthTest`` at significance ``threshold`` (two-sided), a trend being at least MIN_SLOPE.

    >>> big = Counts(10**8, 4 * 10**8, 0, (80_000_000, 63_960_000, 51_104_040, 40_806_076), "one dump")
    >>> test = depth_test(big)
    >>> test.p_value < 1e-4, round(test.slope, 4), test.verdict
    (True, -0.0005, 'slight')
    """
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be between 0 and 1 (got {threshold})")
    trials = (counts.drafts, *counts.per_position[:-1])
    successes = counts.per_position
    weight = sum(trials)
    pooled = sum(successes) / weight
    mean = sum(j * t for j, t in enumerate(trials)) / weight
    sxx = sum(t * (j - mean) ** 2 for j, t in enumerate(trials))
    score = sum((j - mean) * (s - t * pooled) for j, (s, t) in enumerate(zip(successes, trials, strict=True)))
    test = DepthTest("unknown", None, None, None, threshold, trials, successes, pooled, mean)
    if sxx <= 0:  # one position, or no draft got past the first rejection: there is no depth to compare
        return test
    slope = score / sxx
    if pooled in (0.0, 1.0):  # every checked token went the same way: no variance, no test
        return replace(test, slope=slope)
    z = score / math.sqrt(pooled * (1.0 - pooled) * sxx)
    p = math.erfc(abs(z) / math.sqrt(2.0))
    verdict = "flat" if p >= threshold else "slight" if abs(slope) < MIN_SLOPE else "falls" if z < 0 else "rises"
    return replace(test, verdict=verdict, z=z, p_value=p, slope=slope)


def iid_tokens(alpha: float, max_gamma: int) -> list[float]:
    """Expected tokens per target pass for gamma = 0..max_gamma under the i.i.d. model (Eq. 1)."""
    return [theory.expected_tokens(alpha, g) for g in range(check_gamma(max_gamma, "max_gamma") + 1)]


def profile_tokens(counts: Counts, test: DepthTest, max_gamma: int) -> list[float]:
    """Expected tokens per target pass for gamma = 0..max_gamma under the measured position profile.

    Up to the measured gamma this is read off the counters: cutting a round to g drafts keeps its acceptances at
    positions below g, so E[tokens] = 1 + sum_(j<g) N_j / n (at the measured gamma, 1 + accepted / n). Beyond it the
    conditional rate follows the fitted line of ``depth_test``, kept between 0 and the highest measured
    conditional rate, so the extrapolation never credits a depth with more than any measured depth achieved.
    """
    g_max = check_gamma(max_gamma, "max_gamma")
    rates = [n_j / counts.drafts for n_j in counts.per_position]
    conditional = [r for r in _conditional(counts) if r is not None]
    ceiling = max(conditional, default=test.pooled)
    tokens, reach = [1.0], 1.0
    for j in range(g_max):
        if j < counts.gamma:
            reach = rates[j]
        else:
            step = test.pooled + (test.slope or 0.0) * (j - test.mean_depth)
            reach *= min(max(step, 0.0), ceiling)
        tokens.append(tokens[-1] + reach)
    return tokens


def paper_round_cost(cost: float) -> Callable[[int], float]:
    """The time of a round of gamma drafts in target passes, gamma c + 1 (Leviathan et al. 2023, Theorem 3.8).

    ``best_gamma`` takes any such function: a roofline model's round time plugs in the same way.
    """
    c = check_cost(cost)
    return lambda gamma: gamma * c + 1.0


def roofline_round_cost(
    target: costs.Model,
    draft: costs.Model,
    hardware: costs.Hardware,
    *,
    batch: int,
    context: int,
    weight_bytes: float = 2.0,
) -> Callable[[int], float]:
    """The time of a round of gamma drafts in plain target passes, on the roofline of ``costs.pass_cost``.

    (gamma * t_draft(B tokens) + t_target(B (gamma + 1) tokens)) / t_target(B tokens) at batch B and ``context``:
    the round and the plain pass that ``costs.speculative_cost`` compares, so tokens / round cost is its speedup.
    While the verification pass is memory-bound this is gamma c + 1 with c = t_draft / t_target; past the ridge the
    verification grows with gamma, and the best gamma shrinks.

    >>> h100, llama, small = costs.HARDWARE["h100"], costs.MODELS["llama-3.1-8b"], costs.MODELS["llama-3.2-1b"]
    >>> [round(roofline_round_cost(llama, small, h100, batch=b, context=1024)(4), 3) for b in (1, 256)]
    [1.619, 2.259]
    """
    for name, value in (("target", target), ("draft", draft)):
        if not isinstance(value, costs.Model):  # pass_cost would call either of them "model"
            raise TypeError(f"{name} must be a costs.Model, got {type(value).__name__}")
    if isinstance(batch, bool) or not isinstance(batch, int):
        raise TypeError(f"batch must be an int, got {type(batch).__name__}")
    if not 1 <= batch <= costs.MAX_BATCH:  # checked here: pass_cost would name its tokens (= batch) first
        raise ValueError(f"batch must be between 1 and {costs.MAX_BATCH} (got {batch})")
    plain = costs.pass_cost(target, hardware, tokens=batch, context=context, batch=batch, weight_bytes=weight_bytes)
    step = costs.pass_cost(draft, hardware, tokens=batch, context=context, batch=batch, weight_bytes=weight_bytes)

    def round_cost(gamma: int) -> float:
        g = check_gamma(gamma)
        verify = costs.pass_cost(
            target, hardware, tokens=batch * (g + 1), context=context, batch=batch, weight_bytes=weight_bytes
        )
        return (g * step.time + verify.time) / plain.time

    return round_cost


def best_gamma(tokens: Sequence[float], round_cost: Callable[[int], float]) -> int:
    """The gamma (an index of ``tokens``) with the most tokens per unit of time; ties go to the smaller gamma.

    >>> best_gamma(iid_tokens(0.8, 32), paper_round_cost(0.05)) == theory.optimal_gamma(0.8, 0.05)
    True
    """
    rates = [t / round_cost(g) for g, t in enumerate(tokens)]
    return max(range(len(rates)), key=lambda g: (rates[g], -g))


def _conditional(counts: Counts) -> list[float | None]:
    """N_j / N_(j-1), alpha at depth j; None where no draft reached position j."""
    before = (counts.drafts, *counts.per_position[:-1])
    return [n_j / t if t else None for n_j, t in zip(counts.per_position, before, strict=True)]


@dataclass(frozen=True)
class Analysis:
    """Everything the page shows about one window of counters, at draft cost ``cost``."""

    counts: Counts
    accept_rate: float  # accepted / draft tokens
    tokens_per_pass: float  # 1 + accepted / drafts
    per_position: tuple[float, ...]  # [gamma] N_j / n
    conditional: tuple[float | None, ...]  # [gamma] N_j / N_(j-1)
    alpha: float  # the i.i.d. fit, alpha_mle
    depth: DepthTest
    cost: float
    iid: tuple[float, ...]  # [max_gamma + 1] expected tokens per pass under the i.i.d. fit
    profile: tuple[float, ...]  # [max_gamma + 1] the same under the measured profile
    best_iid: int  # the fastest gamma at cost c under the i.i.d. fit (theory.optimal_gamma)
    best_profile: int  # the fastest gamma at cost c under the measured profile, up to ``reach``
    reach: int  # the longest gamma the profile's recommendation searches: EXTRAPOLATE past the measured one
    notes: tuple[str, ...]


def analyse(counts: Counts, cost: float = 0.05, max_gamma: int = 32, threshold: float = 0.01) -> Analysis:
    """The analysis of ``counts`` (see the module docstring), recommending gamma in 0..max_gamma at draft cost c."""
    c = check_cost(cost)
    alpha = alpha_mle(counts)
    test = depth_test(counts, threshold)
    iid = iid_tokens(alpha, max_gamma)
    profile = profile_tokens(counts, test, max_gamma)
    notes = list(counts.notes)
    empty = counts.gamma * counts.drafts - counts.draft_tokens
    if empty:
        # vLLM's V1 scheduler counts a draft only for a step that scheduled draft tokens (update_from_output, as
        # read on its main branch in 2026; the check dates from V1's first speculative decoding).
        notes.append(
            f"{empty:,} of {counts.gamma * counts.drafts:,} draft slots were empty: drafts shorter than "
            f"{counts.gamma}, as an n-gram drafter proposes when its match lies near the end of the context. Later "
            "positions and the fitted \N{GREEK SMALL LETTER ALPHA} read low. vLLM's V1 engine counts no draft for "
            "a step that proposed nothing (no match at all), so these figures describe the steps that drafted, "
            "not every decoding step"
        )
    reach = min(max_gamma, counts.gamma + EXTRAPOLATE)
    return Analysis(
        counts=counts,
        accept_rate=counts.accepted / counts.draft_tokens,
        tokens_per_pass=1.0 + counts.accepted / counts.drafts,
        per_position=tuple(n_j / counts.drafts for n_j in counts.per_position),
        conditional=tuple(_conditional(counts)),
        alpha=alpha,
        depth=test,
        cost=c,
        iid=tuple(iid),
        profile=tuple(profile),
        best_iid=best_gamma(iid, paper_round_cost(c)),
        best_profile=best_gamma(profile[: reach + 1], paper_round_cost(c)),
        reach=reach,
        notes=tuple(notes),
    )
