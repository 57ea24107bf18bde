"""Run the ``>>>`` examples of a Markdown file (README, model card) or of an evaluate module's
strings as doctests.

Examples live in ```python blocks; an example marked ``# doctest: +SKIP`` (one that needs a model
this machine cannot download) is shown but not run. They run from the repository root, where
``evaluate.load("metrics/<name>")`` finds the modules, and every printed value must match.

Imported by test modules as ``from tests.support.markdown_examples import ...``.
"""

from __future__ import annotations

import ast
import doctest
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# Fences anchored at line starts: a ``` inside a line of a block does not end it.
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
OPTION_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _name(path: Path) -> str:
    return str(path.resolve().relative_to(REPO_ROOT))


def markdown_doctest(path: Path) -> doctest.DocTest:
    """The examples of every ```python block of ``path``, as one doctest (names shared across the
    blocks, in order)."""
    text = path.read_text(encoding="utf-8")
    source = "\n".join(_BLOCK.findall(text))
    name = _name(path)
    return doctest.DocTestParser().get_doctest(source, {}, name, name, 0)


def module_doctest(path: Path) -> doctest.DocTest:
    """The examples of a Python file's module-level strings (an evaluate module's docstring,
    description and inputs description ``_KWARGS_DESCRIPTION``), as one doctest, in order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    strings = [node.value.value for node in tree.body
               if isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Constant)
               and isinstance(node.value.value, str)]
    source = "\n".join(string for string in strings if ">>>" in string)
    name = _name(path)
    return doctest.DocTestParser().get_doctest(source, {}, name, name, 0)


def runnable_examples(test: doctest.DocTest) -> list[doctest.Example]:
    """The examples that run (not marked ``# doctest: +SKIP``)."""
    return [example for example in test.examples if not example.options.get(doctest.SKIP)]


def skipped_examples(test: doctest.DocTest) -> list[doctest.Example]:
    """The examples marked ``# doctest: +SKIP`` (shown, not run)."""
    return [example for example in test.examples if example.options.get(doctest.SKIP)]


def run_doctest(test: doctest.DocTest, *, out: Callable[[str], object] | None = None
                ) -> tuple[doctest.TestResults, int]:
    """Run ``test`` from the repository root; ``(results, examples meant to run)``.

    Failure reports go to ``out`` (e.g. ``report.append``, to put them in an assertion message),
    else to stdout (which pytest shows for a failed test).
    """
    ran = len(runnable_examples(test))
    runner = doctest.DocTestRunner(optionflags=OPTION_FLAGS)
    here = os.getcwd()
    os.chdir(REPO_ROOT)
    try:
        with warnings.catch_warnings():
            # Library warnings (e.g. truncation) go to stderr and are not part of what the examples show.
            warnings.simplefilter("ignore")
            runner.run(test, out=out)
    finally:
        os.chdir(here)
    return runner.summarize(verbose=False), ran


def run_markdown_examples(path: Path, *, out: Callable[[str], object] | None = None
                          ) -> tuple[doctest.TestResults, int]:
    """Run ``path``'s examples from the repository root; ``(results, examples meant to run)``."""
    return run_doctest(markdown_doctest(path), out=out)


def run_examples(path: Path, *, out: Callable[[str], object] | None = None
                 ) -> tuple[doctest.TestResults, int]:
    """:func:`run_markdown_examples` for a ``.md`` file, :func:`run_module_examples` otherwise."""
    run = run_markdown_examples if path.suffix == ".md" else run_module_examples
    return run(path, out=out)


def run_module_examples(path: Path, *, out: Callable[[str], object] | None = None
                        ) -> tuple[doctest.TestResults, int]:
    """Run the examples of the Python file ``path``'s module-level strings from the repository
    root; ``(results, examples meant to run)``."""
    return run_doctest(module_doctest(path), out=out)
