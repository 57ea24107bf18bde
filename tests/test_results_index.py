"""benchmarks/results/README.md names every file and folder under benchmarks/results/ (with the command
that wrote it), so a stale result cannot linger unexplained and a new one cannot go unrecorded."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _index_patterns(readme: str) -> list[re.Pattern[str]]:
    """Each back-quoted name in a row of the README's file table, as a pattern: ``*`` and
    ``<name>`` match any run of characters, ``{a,b}`` either alternative, a leading ``_suffix``
    the suffix of the row's first name."""
    patterns = []
    for row in (line for line in readme.splitlines() if line.startswith("| `")):
        first_cell = row.split("|")[1]
        names = re.findall(r"`([^`]+)`", first_cell)
        stem = ""
        for name in names:
            if name.startswith("_") and stem:
                name = stem + name
            else:
                stem = name.split("*")[0].split(".")[0].split("{")[0]
            name = name.split("/")[0] if "/" in name.rstrip("/") else name  # a folder's files: the folder
            regex = re.escape(name).replace(r"\.\*", ".*").replace(r"\*", ".*")
            regex = re.sub(r"<[^>]+>", ".*", regex.replace(r"\<", "<").replace(r"\>", ">"))
            regex = re.sub(r"\\\{([^}]*)\\\}", lambda m: "(" + "|".join(m.group(1).split(",")) + ")", regex)
            patterns.append(re.compile(regex.rstrip("/") + "(/.*)?$"))
    return patterns


def test_every_result_file_is_in_the_index():
    readme = (RESULTS / "README.md").read_text(encoding="utf-8")
    patterns = _index_patterns(readme)
    assert patterns, "the README's file table was not found"
    unlisted = [
        entry.name
        for entry in sorted(RESULTS.iterdir())
        if entry.name != "README.md" and not any(p.match(entry.name) for p in patterns)
    ]
    assert not unlisted, f"benchmarks/results/README.md does not name {unlisted}; add a row with the command that wrote each"


def test_the_index_check_can_fail():
    patterns = _index_patterns("| `speed.md` | x | `cmd` |\n| `realsumm_full.*` (`_levels.png`) | x | y |")
    assert any(p.match("realsumm_full_levels.png") for p in patterns)
    assert not any(p.match("realsumm_lm2.json") for p in patterns)
