"""specdec_core: speculative decoding, exactly, in pure Python.

A cheap *draft* model proposes gamma tokens; the *target* model scores them all in one parallel pass. Each draft
token is *accepted* with probability min(1, p(x)/q(x)); at the first *rejection* the rest of the draft is
*discarded* and a *correction* token is drawn from normalize(max(0, p - q)); when every draft is accepted a
*bonus* token comes from the target's next distribution. The emitted tokens are distributed exactly as the
target's (Leviathan et al. 2023; Chen et al. 2023).

The words in italics are used the same way everywhere: in this package, on the site and in the tests. So are the
quantities (metric names in brackets):

- beta: sum_x min(p(x), q(x)) at one position, the chance that a draft token drawn there is accepted [beta];
- alpha: E[beta], the per-token acceptance rate of Leviathan et al. (2023, Definition 3.1) [alpha];
- gamma: the number of tokens drafted in a round, the *speculation length*;
- draft acceptance rate: accepted / drafted over a run, as vLLM reports it. It sits below alpha, because the
  drafts after a rejection count as drafted but are never checked [accept-rate];
- tokens per target pass: emitted / target passes, vLLM's "mean acceptance length" [tokens-per-pass].

Modules, each depending only on those above it:

- ``distributions``  probability vectors: validation, sampling from a given uniform, residual, acceptance rate
- ``steps``          draft, verify, correct, bonus, and ``speculative_round``
- ``tokenizer``      a small byte-level BPE trained on the bundled text: every string encodes
- ``models``         model pairs: a set agreement rate, a draft-quality knob, small n-gram language models
- ``policies``       how many tokens to draft next
- ``engine``         generation loops producing a ``Trace``
- ``theory``         closed forms (Leviathan et al. 2023) and exact enumeration with ``Fraction``
- ``stats``          goodness of fit: chi-square tests and the total-variation noise level of a sample
- ``web``            the registry the browser calls, one module per page, building plain Plotly figure dicts
- ``batch``          the numpy twin for large Monte Carlo runs (the only module that needs numpy)

Importing the package needs only the standard library, so it runs unchanged in Pyodide.
"""

from .distributions import acceptance_rate, residual
from .steps import Round, speculative_round
from .theory import exact_output_distribution, expected_tokens, optimal_gamma, speedup

__all__ = [
    "Round",
    "acceptance_rate",
    "exact_output_distribution",
    "expected_tokens",
    "optimal_gamma",
    "residual",
    "speculative_round",
    "speedup",
]

__version__ = "0.1.0"
