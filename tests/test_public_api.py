"""The flat public API: ``__all__`` is sorted, complete, and every name in DESIGN.md is there."""

from __future__ import annotations

import importlib
import inspect

import pytest

import specdec_core

CONTRACT = {
    "acceptance_rate",
    "residual",
    "speculative_round",
    "expected_tokens",
    "speedup",
    "optimal_gamma",
    "exact_output_distribution",
}

MODULES = [
    "specdec_core",
    "specdec_core.distributions",
    "specdec_core.steps",
    "specdec_core.theory",
    "specdec_core.tokenizer",
    "specdec_core.vllm_metrics",
    "specdec_core.multidraft",
]


def test_contract_names_are_exported() -> None:
    assert set(specdec_core.__all__) >= CONTRACT


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    for exported in module.__all__:
        assert hasattr(module, exported), exported


@pytest.mark.parametrize("name", MODULES[1:])
def test_all_lists_every_public_function_and_class(name: str) -> None:
    module = importlib.import_module(name)
    defined_here = {
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == name
    }
    assert defined_here <= set(module.__all__)
