"""The project README's examples print what they show (the library call, the result contract, an
evaluate module with mixed reference shapes)."""

from __future__ import annotations

import pytest

from tests.support.markdown_examples import REPO_ROOT, run_markdown_examples


@pytest.mark.slow
def test_readme_examples_print_what_they_show():
    results, ran = run_markdown_examples(REPO_ROOT / "README.md")
    assert ran >= 12, "the README lost its runnable examples"
    assert results.failed == 0, f"{results.failed} of {results.attempted} README examples failed (output above)"
