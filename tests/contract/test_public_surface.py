"""The public surface: what each package's ``__all__`` holds.

- A metric package's ``__all__`` holds its metric function, its result class, its statistics
  functions (those its spec resamples with) and ``refusals``; constants are never in an
  ``__all__`` (they stay importable from their modules);
- every import path a spec names (the call, the functions it forwards to, the statistics, the
  choices of an option) resolves, so that trimming a package's names never breaks a front end;
- BLEU has one function from summed statistics;
- the spec class is named for what it is (``MetricSpec``), its former name an alias.
"""

from __future__ import annotations

import importlib
import pkgutil
import typing

import pytest

import nlgmetrics
from nlgmetrics.core.protocol import resolve
from nlgmetrics.registry import get_protocol, metric_names

PACKAGES = ["nlgmetrics"] + [f"nlgmetrics.{info.name}" for info in pkgutil.iter_modules(nlgmetrics.__path__)
                             if info.ispkg]


def _public(package: str) -> list[str]:
    return list(getattr(importlib.import_module(package), "__all__", []))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves_and_none_is_a_constant(package):
    names = _public(package)
    module = importlib.import_module(package)
    assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what the package does not hold: {missing}"
    constants = [name for name in names if name.isupper()]
    assert not constants, (f"{package}.__all__ holds constants {constants}: leave them in their modules "
                           f"(importable there), out of the public surface")


def _paths(name: str) -> list[str]:
    protocol = get_protocol(name)
    paths = [protocol.compute, *protocol.forwards_to]
    if protocol.resampling is not None:
        paths += [protocol.resampling.statistics_path, protocol.resampling.from_statistics_path]
    paths += [option.choices for option in protocol.options if isinstance(option.choices, str)]
    return paths


@pytest.mark.parametrize("name", metric_names())
def test_every_import_path_of_a_spec_resolves(name):
    for path in _paths(name):
        assert resolve(path) is not None, path


@pytest.mark.parametrize("name", metric_names())
def test_a_metric_package_exports_its_metric_result_statistics_and_refusals(name):
    protocol = get_protocol(name)
    package, _, function = protocol.compute.partition(":")
    expected = {function, protocol.result_class().__name__, "refusals"}
    if protocol.resampling is not None:
        for path in (protocol.resampling.statistics_path, protocol.resampling.from_statistics_path):
            module, _, statistics = path.partition(":")
            assert module == package, f"{path}: a spec resamples with its own package's statistics"
            expected.add(statistics)
    assert expected <= set(_public(package)), sorted(expected - set(_public(package)))


def test_bleu_has_one_function_from_summed_statistics():
    import nlgmetrics.bleu
    import nlgmetrics.bleu.score

    assert [name for name in nlgmetrics.bleu.__all__ if "from_stat" in name] == ["bleu_from_statistics"]
    assert not hasattr(nlgmetrics.bleu, "bleu_from_stats") and not hasattr(nlgmetrics.bleu.score, "bleu_from_stats")


def test_the_spec_is_named_for_what_it_is():
    from nlgmetrics.core.protocol import MetricProtocol, MetricSpec

    assert MetricProtocol is MetricSpec  # the former name still imports
    assert not getattr(MetricSpec, "_is_protocol", False)  # a dataclass of data, not a typing.Protocol
    assert all(type(get_protocol(name)) is MetricSpec for name in metric_names())
    assert MetricSpec.__name__ == "MetricSpec" and typing.Protocol not in MetricSpec.__mro__
