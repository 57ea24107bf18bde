"""benchmarks/results/README.md names every file and folder under benchmarks/results/ (with the command
that wrote it), so a stale result cannot linger unexplained and a new one cannot go unrecorded."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
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


# ------------------------------------------------------------------------------------------------
# a test run never writes into benchmarks/results (the committed results are refreshed on purpose)

TESTS = Path(__file__).resolve().parent
#: Calls that write to the path they are given or called on.
WRITERS = frozenset({"save_screenshot", "screenshot", "write_text", "write_bytes", "savefig", "mkdir", "touch",
                     "to_csv", "to_json", "copy", "copyfile", "copytree", "move", "rename", "replace"})


def _names_the_results_folder(node: ast.AST, tainted: set[str]) -> bool:
    """The expression builds a path into benchmarks/results ("benchmarks" / "results", the string
    "benchmarks/results", or a name bound to such a path)."""
    strings = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return ({"benchmarks", "results"} <= strings or any("benchmarks/results" in s for s in strings)
            or bool(names & tainted))


def _in_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node``'s own scope: not those inside the functions it defines."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield child
            yield from _in_scope(child)


def _bound_to_results(nodes: list[ast.AST], tainted: set[str]) -> set[str]:
    """``tainted`` plus every name these nodes bind to a path into benchmarks/results (to a fixed point)."""
    tainted = set(tainted)
    assignments = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]
    for _ in range(len(assignments) + 1):
        for node in assignments:
            if _names_the_results_folder(node.value, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                tainted |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return tainted


def _writes(call: ast.Call) -> list[ast.AST]:
    """What ``call`` writes to (its arguments and receiver), or nothing if it writes nothing."""
    function = call.func
    receiver = [function.value] if isinstance(function, ast.Attribute) else []
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if name == "open":  # open(path, mode) or path.open(mode)
        mode = [k.value for k in call.keywords if k.arg == "mode"] or call.args[1 - len(receiver):2 - len(receiver)]
        if not (mode and isinstance(mode[0], ast.Constant) and set(str(mode[0].value)) & set("wax+")):
            return []
    elif name not in WRITERS:
        return []
    return [*call.args, *(k.value for k in call.keywords), *receiver]


def results_writes(source: str) -> list[int]:
    """Lines of ``source`` that call a writer (or ``open`` for writing) on a path into benchmarks/results:
    names bound at module level count everywhere, names bound in a function within it."""
    tree = ast.parse(source)
    module = _bound_to_results(list(_in_scope(tree)), set())
    scopes = [(tree, module, list(_in_scope(tree)))]
    scopes += [(f, _bound_to_results(list(ast.walk(f)), module), list(ast.walk(f)))
               for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lines = set()
    for _, tainted, nodes in scopes:
        for call in (n for n in nodes if isinstance(n, ast.Call)):
            if any(_names_the_results_folder(part, tainted) for part in _writes(call)):
                lines.add(call.lineno)
    return sorted(lines)


def test_no_test_writes_into_the_committed_results():
    offenders = {path.name: lines for path in sorted(TESTS.rglob("*.py"))
                 if (lines := results_writes(path.read_text(encoding="utf-8")))}
    assert not offenders, (f"tests write into benchmarks/results at {offenders}: write under tmp_path "
                           f"(screenshots: the `screenshots` fixture)")


def test_the_results_write_check_can_fail():
    # the two ways the browser tests used to save their screenshots into the committed folder
    assert results_writes('SCREENSHOTS = ROOT / "benchmarks" / "results" / "screenshots"\n'
                          'SCREENSHOTS.mkdir(parents=True)\n'
                          'driver.save_screenshot(str(SCREENSHOTS / "a.png"))\n') == [2, 3]
    assert results_writes('out = Path("benchmarks/results") / "x.md"\nopen(out, "w")\nout.open("a")\n') == [2, 3]
    assert results_writes('def f():\n    p = Path("benchmarks/results/a")\n    p.write_text("x")\n') == [3]
    # a name bound to the results in one function is not that path in another
    assert results_writes('def f():\n    p = Path("benchmarks/results/a")\n    p.read_text()\n'
                          'def g(p):\n    p.write_text("x")\n') == []
    # reading the committed results is fine
    assert results_writes('RESULTS = REPO / "benchmarks" / "results"\nRESULTS.read_text()\n'
                          'open(RESULTS / "a.json")\nsorted(RESULTS.glob("*.json"))\n'
                          'open(RESULTS / "x.txt")\n(RESULTS / "w").open()\n') == []


def test_screenshots_go_to_a_temporary_folder_unless_asked(tmp_path, monkeypatch):
    from tests.browser_support import SCREENSHOTS_ENV, screenshots_folder

    monkeypatch.delenv(SCREENSHOTS_ENV, raising=False)
    assert screenshots_folder(tmp_path / "tmp") == tmp_path / "tmp"
    monkeypatch.setenv(SCREENSHOTS_ENV, str(tmp_path / "chosen"))
    assert screenshots_folder(tmp_path / "tmp") == tmp_path / "chosen" and (tmp_path / "chosen").is_dir()
