"""The import graph of ``src/nlgmetrics``: no cycles, the layers, no private names across modules.

Read from the source with :mod:`ast` (nothing is imported), counting every import: at module
level, inside functions (the lazy imports that keep ``import nlgmetrics.blanc`` free of torch) and
under ``if TYPE_CHECKING:`` (a type-only import is still a dependency on that layer).

Layers, bottom up (each may import the ones below it and itself):

- ``nlgmetrics`` (the root package, ``__version__``): nothing;
- ``core`` (result base, signatures, validation): no other nlgmetrics package;
- ``engine`` (loading and running LMs): ``core``;
- ``testing`` (random models for tests and docstrings): ``core`` and ``engine``;
- the metrics (``infolm``, ``shannon``, ``blanc``, ``fflm``, ``rouge``, ``bleu``, ``chrf``,
  ``ter``): ``core``, ``engine`` and their own package, never another metric;
- ``registry`` (the list of the metrics' protocols): ``core`` and the metrics;
- ``stats`` (correlations, bootstrap, Williams, paired tests): ``core``;
- ``meta`` (meta-evaluation): the metrics, ``core``, ``engine`` and ``stats``;
- ``compare`` (system-vs-system tests over any registered metric): the metrics through the
  ``registry``, ``core``, ``engine`` and ``stats``; never the front ends;
- ``apps`` (front ends): everything.

No library module imports ``testing``: library code must not depend on a test helper.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nlgmetrics.registry import get_protocol, metric_names

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "src" / "nlgmetrics"
ROOT = "nlgmetrics"
#: The metric packages: the package of each registered protocol's library function.
METRICS = frozenset(get_protocol(name).compute.split(":")[0].split(".")[1] for name in metric_names())
#: Layer -> the layers it may import (besides itself and the root package).
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "engine": frozenset({"core"}),
    "testing": frozenset({"core", "engine"}),
    **{metric: frozenset({"core", "engine"}) for metric in METRICS},
    # The statistics a user calls on their own scores (correlations, bootstrap, paired tests).
    "stats": frozenset({"core"}),
    "meta": frozenset({"core", "engine", "stats", *METRICS}),
    # The list of the metrics' protocols (each declared in its metric's package).
    "registry": frozenset({"core", *METRICS}),
    # System-vs-system tests run any registered metric through its protocol.
    "compare": frozenset({"core", "engine", "stats", "registry", *METRICS}),
    "apps": frozenset({"core", "engine", "testing", "stats", "meta", "compare", "registry", *METRICS}),
}


@dataclass(frozen=True)
class Import:
    """One imported name: ``module`` (the nlgmetrics module it resolves to), the ``name`` taken
    from it (None for ``import x.y``) and where."""

    importer: str
    module: str
    name: str | None
    line: int


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (``pkg/__init__.py`` is ``pkg``)."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _longest_module(dotted: str) -> str | None:
    """The longest prefix of ``dotted`` that is one of our modules (``a.b.name`` -> ``a.b``)."""
    while dotted:
        if dotted in MODULES:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if _is_package(importer) else importer.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(importer: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[importer].read_text(encoding="utf-8"), filename=str(MODULES[importer]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                module = _longest_module(alias.name)
                if module is not None:
                    yield Import(importer, module, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(importer, node)
            if _longest_module(base) is None:
                continue  # not nlgmetrics
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:  # `from pkg import module`
                    yield Import(importer, submodule, None, node.lineno)
                else:
                    yield Import(importer, _longest_module(base), alias.name, node.lineno)


IMPORTS = {module: list(_imports(module)) for module in MODULES}


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs: the module itself and the packages above it
    (their ``__init__`` runs first), except those above the importer too (already running)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for importer, imports in IMPORTS.items():
        own = set(_ancestors(importer))
        for item in imports:
            for target in (*_ancestors(item.module), item.module):
                if target != importer and target not in own:
                    graph[importer].add(target)
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return ROOT if len(parts) == 1 else parts[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_the_package_was_read():
    assert {"nlgmetrics", "nlgmetrics.core.result", "nlgmetrics.engine", "nlgmetrics.blanc.help",
            "nlgmetrics.registry", "nlgmetrics.core.protocol", "nlgmetrics.testing"} <= set(MODULES)
    # Lazy (in-function) imports are seen: blanc's variants import the engine only when they run.
    assert any(item.module == "nlgmetrics.engine.planning" for item in IMPORTS["nlgmetrics.blanc.help"])


def test_the_checks_can_fail():
    """The cycle finder and the layer rule catch what they are for (on made-up graphs and names)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _layer("nlgmetrics.blanc.help") == "blanc" and "shannon" not in ALLOWED["blanc"]
    assert "apps" not in ALLOWED["meta"] and "apps" not in ALLOWED["compare"] and not ALLOWED["core"]
    assert _is_private("_pad") and not _is_private("__version__") and not _is_private("pad")


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles (each list imports itself around): {cycles}"


def test_every_module_has_a_layer():
    unknown = sorted(m for m in MODULES if _layer(m) != ROOT and _layer(m) not in ALLOWED)
    assert not unknown, f"modules outside every layer (add their layer to ALLOWED): {unknown}"


def test_the_root_package_imports_nothing_of_nlgmetrics():
    assert not IMPORTS[ROOT], IMPORTS[ROOT]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers(layer):
    allowed = ALLOWED[layer] | {layer, ROOT}
    wrong = sorted(
        f"{item.importer}:{item.line} imports {item.module}"
        for module, imports in IMPORTS.items() if _layer(module) == layer
        for item in imports if _layer(item.module) not in allowed
    )
    assert not wrong, f"{layer} may import only {sorted(allowed)}:\n" + "\n".join(wrong)


def test_no_library_module_imports_testing():
    wrong = sorted(
        f"{item.importer}:{item.line}"
        for module, imports in IMPORTS.items() if _layer(module) not in ("testing", "apps")
        for item in imports if _layer(item.module) == "testing"
    )
    assert not wrong, f"library modules importing nlgmetrics.testing: {wrong}"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_attribute_uses(importer: str) -> Iterator[str]:
    """``alias._name`` where ``alias`` is bound to an nlgmetrics module by an import."""
    tree = ast.parse(MODULES[importer].read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in MODULES:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(importer, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and _is_private(node.attr)
                and aliases[node.value.id] != importer):
            yield f"{importer}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}"


def test_no_private_name_of_another_module():
    wrong = []
    for importer, imports in IMPORTS.items():
        for item in imports:
            if item.name is not None and _is_private(item.name) and item.module != importer:
                wrong.append(f"{importer}:{item.line} imports {item.name} from {item.module}")
            # A private module is private to its own package.
            package = importer if _is_package(importer) else importer.rpartition(".")[0]
            private = [part for part in item.module.split(".") if _is_private(part)]
            if private and item.module.rpartition(".")[0] != package:
                wrong.append(f"{importer}:{item.line} imports the private module {item.module}")
        wrong.extend(_private_attribute_uses(importer))
    assert not wrong, "private names used across modules (give them a public name):\n" + "\n".join(sorted(wrong))
