"""Every docstring example in the nlgmetrics package runs and prints what it shows.

The examples are part of the documentation (the style rule: a docstring with a runnable example);
this keeps them true as the code changes. Each module is one test, so a failure names its module.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import nlgmetrics

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(nlgmetrics.__path__, prefix="nlgmetrics.")
)


def test_modules_were_found():
    assert "nlgmetrics.engine.causal" in MODULES and "nlgmetrics.fflm" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples in {name} failed (output above)"
