"""benchmarks/results/README.md names every report folder under benchmarks/results/ and every file in it
(with the command that wrote it), so a stale result cannot linger unexplained and a new one cannot go
unrecorded; every relative link in the results' markdown resolves."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"


def _index_names(readme: str) -> list[str]:
    """Each back-quoted name in the first cell of a row of the README's file table (``folder/file``
    or ``folder/``); a leading ``_suffix`` is the suffix of the row's last full name."""
    names = []
    for row in (line for line in readme.splitlines() if line.startswith("| `")):
        stem = ""
        for name in re.findall(r"`([^`]+)`", row.split("|")[1]):
            if name.startswith("_") and stem:
                name = stem + name
            else:
                stem = name.split("*")[0].split(".")[0].split("{")[0]
            names.append(name)
    return names


def _pattern(name: str) -> re.Pattern[str]:
    """``*`` and ``<name>`` match any run of characters, ``{a,b}`` either alternative."""
    regex = re.escape(name).replace(r"\.\*", ".*").replace(r"\*", ".*")
    regex = re.sub(r"<[^>]+>", ".*", regex.replace(r"\<", "<").replace(r"\>", ">"))
    regex = re.sub(r"\\\{([^}]*)\\\}", lambda m: "(" + "|".join(m.group(1).split(",")) + ")", regex)
    return re.compile(regex + "$")


def unlisted(readme: str, root: Path) -> list[str]:
    """What under ``root`` the index does not name: a top-level entry no name lies in, or a file
    directly inside a folder the index names file by file (``folder/`` names the whole folder)."""
    names = _index_names(readme)
    tops = [_pattern(n.split("/")[0]) for n in names]
    whole = {n.split("/")[0] for n in names if n.endswith("/")}
    files = {}
    for n in names:
        if "/" in n.rstrip("/") and not n.endswith("/"):
            files.setdefault(n.split("/")[0], []).append(_pattern(n.rsplit("/", 1)[1]))
    missing = []
    for entry in sorted(root.iterdir()):
        if entry.name == "README.md":
            continue
        if not any(p.match(entry.name) for p in tops):
            missing.append(entry.name)
        elif entry.is_dir() and entry.name not in whole:
            patterns = [p for top, ps in files.items() if _pattern(top).match(entry.name) for p in ps]
            missing += [f"{entry.name}/{f.name}" for f in sorted(entry.iterdir())
                        if f.is_file() and not any(p.match(f.name) for p in patterns)]
    return missing


def test_every_result_file_is_in_the_index():
    readme = (RESULTS / "README.md").read_text(encoding="utf-8")
    assert _index_names(readme), "the README's file table was not found"
    missing = unlisted(readme, RESULTS)
    assert not missing, f"benchmarks/results/README.md does not name {missing}; add a row with the command that wrote each"


def test_the_index_check_can_fail(tmp_path):
    for name in ("speed/speed.md", "speed/speed.json", "realsumm_full/realsumm_full_levels.png",
                 "realsumm_lm2/realsumm_lm2.json", "gpu/log.txt", "stray.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    readme = "| `speed/speed.md` | x | `cmd` |\n| `realsumm_full/realsumm_full.*` (`_levels.png`) | x | y |\n| `gpu/` | |\n"
    assert unlisted(readme, tmp_path) == ["realsumm_lm2", "speed/speed.json", "stray.md"]


def relative_links(markdown: str) -> list[str]:
    """The targets of the markdown's links and images that are paths (no scheme, no bare anchor).

    >>> relative_links("![a](x/y.png) [b](https://e.org) [c](#top) [d](../z.md#part)")
    ['x/y.png', '../z.md']
    """
    targets = re.findall(r"\]\(([^)\s]+)\)", markdown)
    return [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def broken_links(root: Path) -> list[str]:
    """``file -> target`` for each relative link of the markdown under ``root`` that leads nowhere."""
    return [f"{path.relative_to(root)} -> {target}" for path in sorted(root.rglob("*.md"))
            for target in relative_links(path.read_text(encoding="utf-8")) if not (path.parent / target).exists()]


def test_every_relative_link_in_the_results_resolves():
    broken = broken_links(RESULTS)
    assert not broken, f"links in benchmarks/results that lead nowhere: {broken}"


def test_the_link_check_can_fail(tmp_path):
    (tmp_path / "realsumm_full").mkdir()
    (tmp_path / "realsumm_full" / "realsumm_full_levels.png").write_bytes(b"")
    (tmp_path / "realsumm_full" / "realsumm_full.md").write_text("![levels](realsumm_full_levels.png)")
    # the index as it was before the reports had folders: its image beside it, not in the folder
    (tmp_path / "README.md").write_text("![levels](realsumm_full_levels.png) ![ok](realsumm_full/realsumm_full_levels.png)")
    assert broken_links(tmp_path) == ["README.md -> realsumm_full_levels.png"]


# ------------------------------------------------------------------------------------------------
# a test run never writes into benchmarks/results (the committed results are refreshed on purpose)

TESTS = Path(__file__).resolve().parents[2]
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
    from tests.support.browser_support import SCREENSHOTS_ENV, screenshots_folder

    monkeypatch.delenv(SCREENSHOTS_ENV, raising=False)
    assert screenshots_folder(tmp_path / "tmp") == tmp_path / "tmp"
    monkeypatch.setenv(SCREENSHOTS_ENV, str(tmp_path / "chosen"))
    assert screenshots_folder(tmp_path / "tmp") == tmp_path / "chosen" and (tmp_path / "chosen").is_dir()
