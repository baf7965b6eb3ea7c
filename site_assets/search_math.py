"""After ``zensical build``: the math in Zensical's search index as plain symbols (``make site-zensical`` runs it).

The pages' math is TeX in their text (``\\( … \\)`` and ``\\[ … \\]``), typeset by KaTeX on the page. Material's search
results are typeset the same way (js/math.js), but Zensical 0.0.73 draws its results in a shadow root, from the
index as written, and quoted the source: "\\(\\min\\left(1, \\frac{p(x)}{q(x)}\\right)\\)". This rewrites each item's
title and text in ``search.json`` to "min(1, (p(x))/(q(x)))". It covers the commands the pages use; any other reads
as its name. The index is then searched for the symbols, as the page shows them.

Usage: python site_assets/search_math.py site-zensical/search.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SYMBOLS = {
    "alpha": "\N{GREEK SMALL LETTER ALPHA}",
    "beta": "\N{GREEK SMALL LETTER BETA}",
    "gamma": "\N{GREEK SMALL LETTER GAMMA}",
    "delta": "\N{GREEK SMALL LETTER DELTA}",
    "epsilon": "\N{GREEK SMALL LETTER EPSILON}",
    "varepsilon": "\N{GREEK SMALL LETTER EPSILON}",
    "pi": "\N{GREEK SMALL LETTER PI}",
    "sum": "\N{GREEK CAPITAL LETTER SIGMA}",
    "prod": "\N{GREEK CAPITAL LETTER PI}",
    "cdot": "\N{MIDDLE DOT}",
    "dots": "\N{HORIZONTAL ELLIPSIS}",
    "ldots": "\N{HORIZONTAL ELLIPSIS}",
    "mid": "|",
    "sim": "~",
    "le": "\N{LESS-THAN OR EQUAL TO}",
    "leq": "\N{LESS-THAN OR EQUAL TO}",
    "ge": "\N{GREATER-THAN OR EQUAL TO}",
    "geq": "\N{GREATER-THAN OR EQUAL TO}",
    "times": "\N{MULTIPLICATION SIGN}",
    "in": "\N{ELEMENT OF}",
    "infty": "\N{INFINITY}",
    "sqrt": "\N{SQUARE ROOT}",
}
MATH = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.DOTALL)
FRAC = re.compile(r"\\[td]?frac\{([^{}]*)\}\{([^{}]*)\}")
WORDS = re.compile(r"\\(?:text|mathrm|mathbf|mathbb|operatorname)\{([^{}]*)\}")
SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")
SIZES = re.compile(r"\\(?:left|right|[bB]igg?[lr]?)(?![A-Za-z])")
SPACES = re.compile(r"\\(?:q?quad(?![A-Za-z])|[,;:! ])")
COMMAND = re.compile(r"\\([A-Za-z]+)")
ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[A-Za-z]+\*?\}")  # aligned, gathered
# Their line breaks and alignment points, "&" or "&amp;" (the index holds HTML): not the "&" of "&lt;".
LINES = re.compile(r"\\\\|&amp;|&(?![A-Za-z]+;|#\d+;)")


def _group(tex: str) -> str:
    """A fraction's part or a script: bare if one symbol or word, else in parentheses."""
    bare = re.fullmatch(r"\s*[\w\\]+\s*", tex) and not re.match(r"\s*\\[td]?frac", tex)
    return tex.strip() if bare else f"({tex})"


def readable(tex: str) -> str:
    r"""One formula's TeX (without its delimiters) as plain text.

    >>> readable(r"\min\left(1, \frac{p(x)}{q(x)}\right)")
    'min(1, (p(x))/(q(x)))'
    >>> readable(r"\frac{1 - x^{k+1}}{1 - x}")
    '(1 - x^(k+1))/(1 - x)'
    >>> readable(r"N = \text{accepted} + 1, \quad \{1, 2\}")
    'N = accepted + 1, {1, 2}'
    >>> readable(r"\begin{aligned} \beta &= \sum_x q(x) \\ &= 1 \end{aligned}")
    'β = Σ_x q(x) = 1'
    """
    s = tex.replace("\\{", "\x01").replace("\\}", "\x02")  # literal braces, kept apart from the grouping ones
    s = LINES.sub(" ", ENVIRONMENT.sub(" ", s))  # a multi-line formula reads as one line
    before = None
    while before != s:
        before = s
        s = FRAC.sub(lambda m: f"{_group(m[1])}/{_group(m[2])}", s)
        s = WORDS.sub(r"\1", s)
        s = SCRIPT.sub(lambda m: m[1] + _group(m[2]), s)
    s = SPACES.sub(" ", SIZES.sub("", s))
    s = COMMAND.sub(lambda m: SYMBOLS.get(m[1], m[1]), s).replace("{", "").replace("}", "")
    return " ".join(s.replace("\x01", "{").replace("\x02", "}").split())


def plain_math(text: str) -> str:
    """Every formula in ``text`` as plain text; the rest as it was."""
    return MATH.sub(lambda m: readable(m[1] if m[1] is not None else m[2]), text)


def rewrite(index: Path) -> int:
    """Rewrite Zensical's ``search.json`` in place; return how many items changed."""
    data = json.loads(index.read_text("utf-8"))
    changed = 0
    for item in data["items"]:
        before = dict(item)
        for key in ("title", "text"):
            if isinstance(item.get(key), str):
                item[key] = plain_math(item[key])
        changed += item != before
    index.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), "utf-8")
    return changed


if __name__ == "__main__":
    print(f"search_math: {rewrite(Path(sys.argv[1]))} index entries now show their math as symbols")
