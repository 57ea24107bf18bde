"""The documentation says each fact once, where a newcomer looks for it, and says it as the code does.

- the README's first screen names how to install, a first score, every metric's card and the LM
  engine's page (metrics/engine.md);
- the LM signature layout written in the README and on the engine page is the one
  ``nlgmetrics.core.signature`` writes (``tokenizer`` included);
- the four LM cards link the engine page and do not repeat what it holds (bf16 on a CPU, the
  store's commands, the allocator opt-in);
- the cards hold no measured, machine-specific speed figures (those live in benchmarks/results/);
- the BLANC-Shannon formula is written in one place (the Shannon card) and pointed to elsewhere;
- every relative link of the README, the engine page and the cards reaches a file, and an anchor
  a heading of it.

Fast: reads Markdown files; no model.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nlgmetrics.core.signature import LM_LIBRARIES, MODEL_KEYS, make_signature
from nlgmetrics.registry import get_protocol, metric_names

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ENGINE_PAGE = ROOT / "metrics" / "engine.md"
CARDS = {name: ROOT / "metrics" / name / "README.md" for name in metric_names()}
LM_CARDS = {name: path for name, path in CARDS.items() if get_protocol(name).uses_model}
#: What a newcomer sees without scrolling far: the title, install, a first score, the table.
FIRST_SCREEN_LINES = 60
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_readme_first_screen_names_install_a_first_score_every_card_and_the_engine_page():
    first_screen = "\n".join(_read(README).splitlines()[:FIRST_SCREEN_LINES])
    assert "## Install" in first_screen and "## A first score" in first_screen, "no install or first score up front"
    assert ">>> " in first_screen.split("## A first score", 1)[1], "the first score is not a runnable example"
    missing = [name for name in CARDS if f"(metrics/{name}/README.md)" not in first_screen]
    assert not missing, f"the README's first screen does not link the cards of {missing}"
    assert "(metrics/engine.md)" in first_screen


def test_the_written_lm_signature_layout_is_the_one_the_code_writes():
    """``<metric>|model|weights|tokenizer|...``: the keys and their order from a real signature."""
    signature = make_signature("m", {"k": 1}, model={key: "x" for key in MODEL_KEYS})
    keys = [part.split(":")[0] for part in signature.split("|")[1:]]
    assert keys == [*MODEL_KEYS, "k", *LM_LIBRARIES, "version"]
    layout = "|".join(["<metric>", *MODEL_KEYS, "<metric keys, sorted>", *LM_LIBRARIES, "version"])
    for page in (README, ENGINE_PAGE):
        text = _read(page)
        assert f"`{layout}`" in text, f"{page.relative_to(ROOT)} does not write the LM signature layout {layout}"
        written = re.findall(r"`<metric>\|model\|[^`]*`", text)
        assert all(w == f"`{layout}`" for w in written), written


@pytest.mark.parametrize("name", sorted(LM_CARDS))
def test_each_lm_card_links_the_engine_page_instead_of_repeating_it(name):
    card = _read(LM_CARDS[name])
    assert "](../engine.md" in card, f"metrics/{name}/README.md does not link metrics/engine.md"
    for repeated in ("## bfloat16 on a CPU", "nlgmetrics cache clear", "NLGMETRICS_KEEP_FREED_MEMORY",
                     "What the store guarantees"):
        assert repeated not in card, f"metrics/{name}/README.md repeats the engine page: {repeated!r}"


#: A measured speed ratio ("12x faster", "at 0.19x") or a named machine marks a dated number.
_MEASURED = re.compile(r"\b\d+(\.\d+)?x (faster|slower|at|in)\b|\b(H100|H200|A100|EPYC|Xeon|Zen \d)\b")


@pytest.mark.parametrize("name", sorted(CARDS))
def test_the_cards_hold_no_measured_machine_specific_numbers(name):
    found = [m.group(0) for m in _MEASURED.finditer(_read(CARDS[name]))]
    assert not found, f"metrics/{name}/README.md holds measured numbers {found}: link benchmarks/results/ instead"


def test_the_blanc_shannon_formula_is_written_once():
    """The Shannon card writes it; the code computing it, the module docstrings and the evaluate
    module point there."""
    formula = re.compile(r"S01 [-−] S10\)? */ *(\(?S00|total)")
    places = [*ROOT.joinpath("src", "nlgmetrics", "shannon").glob("*.py"),
              *ROOT.joinpath("metrics", "shannon_score").glob("*.*"), README, ENGINE_PAGE]
    written = sorted(str(p.relative_to(ROOT)) for p in places if p.is_file() and formula.search(_read(p)))
    assert written == ["metrics/shannon_score/README.md"], written


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6}\s+(.*)$", _read(path), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", [README, ENGINE_PAGE, *CARDS.values()], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_a_heading(page):
    broken = []
    for target in _LINK.findall(_read(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"
