"""The model cards' "What we refuse and why" sections, and the rule lists they are written from.

Every card has a section written by ``python scripts/release.py write`` from its metric's
``refusals()`` (BLANC: both variants), between ``<!-- refusals:start ... -->`` and
``<!-- refusals:end -->``; a card whose section differs from what the command would write fails
here (and in tests/e2e/test_release.py, which checks every generated file).

The LM metrics' checks raise the very rule that refused (``OptionError``; tests/contract/test_lm_option_ranges.py
fires each). The text metrics' checks (ROUGE, BLEU, chrF, TER) raise plain ``ValueError``/``TypeError``
(but for the shared ones: switches and ROUGE's seed raise their rule, tested below), so here the list
and the checks are tied by probes:

- every rule of ``nlgmetrics.<metric>.RULES`` has probes, calls that must be refused with a message
  matching the rule's pattern (:data:`MESSAGES`), and together they pass every option the rule names;
- every refusal of the documented out-of-range settings (``OUTSIDE`` of tests/support/hypothesis_support.py)
  matches the pattern of a rule about the option it sets;
- every option of the metric's public functions is named by some rule (or listed in
  :data:`UNCHECKED` with the reason);
- every option is given an integer too long to print (:data:`HUGE`, thousands of digits) by some
  probe: the message must still be the rule's, not Python's "Exceeds the limit (4300 digits) for
  integer string conversion".

Fast: no model, a few calls of the text metrics on one short pair.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import nlgmetrics.bleu as bleu_package
import nlgmetrics.chrf as chrf_package
import nlgmetrics.rouge as rouge_package
import nlgmetrics.ter as ter_package
from nlgmetrics.core.refusals import OptionError, Refusal
from nlgmetrics.core.validation import shown_value
from tests.support.hypothesis_support import OUTSIDE, library_function

ROOT = Path(__file__).resolve().parents[2]
PREDS = ["a b c"]
REFS = ["a b d"]
LONG = ["a b c d e f g h i j"]  # ten tokens: ROUGE-W's weight limit is ~17.5 there
#: An integer Python refuses to print (more than 4300 digits): repr() of it in a message raises.
HUGE = 10**5000


def _release_module():
    spec = importlib.util.spec_from_file_location("nlgmetrics_release_script_cards", ROOT / "scripts" / "release.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while building the class
    spec.loader.exec_module(module)
    return module


release = _release_module()

# The rule modules are shadowed by the function of the same name in each package namespace
# (``nlgmetrics.bleu.refusals`` is the function): reach them through sys.modules.
rouge_rules = sys.modules["nlgmetrics.rouge.refusals"]
bleu_rules = sys.modules["nlgmetrics.bleu.refusals"]
chrf_rules = sys.modules["nlgmetrics.chrf.refusals"]
ter_rules = sys.modules["nlgmetrics.ter.refusals"]


@dataclass(frozen=True)
class Probe:
    """One call that a rule must refuse: ``function(*args, **kwargs)``."""

    function: Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = (PREDS, REFS)

    def arguments(self) -> set[str]:
        """The parameter names this call binds (``options`` for a ``**options`` catch-all)."""
        return set(inspect.signature(self.function).bind(*self.args, **self.kwargs).arguments)

    def arguments_with_values(self) -> dict[str, Any]:
        """The values this call binds, by name (keyword arguments caught by ``**options`` by their own)."""
        bound = dict(inspect.signature(self.function).bind(*self.args, **self.kwargs).arguments)
        for name, parameter in inspect.signature(self.function).parameters.items():
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                bound.update(bound.pop(name, {}))
        return bound

    def __str__(self) -> str:
        return f"{self.function.__name__}({', '.join(f'{k}={shown_value(v, 40)}' for k, v in self.kwargs.items())})"


def _split_on_space(text: str) -> list[str]:
    return text.split(" ")


def _returns_a_string(text: str) -> str:
    return text


def _returns_ints(text: str) -> list[int]:
    return [1]


def _returns_a_huge_int(text: str) -> int:
    return HUGE


def _returns_huge_ints(text: str) -> list[int]:
    return [HUGE]


rouge = rouge_package.rouge_family
R = rouge_rules
#: rule -> (the pattern its refusals' messages match, the probes that fire it)
ROUGE: dict[Refusal, tuple[str, list[Probe]]] = {
    R.TYPE_NAME_RULE: (r"Unknown rouge type", [Probe(rouge, dict(rouge_types=["rougeX"])),
                                               Probe(rouge, dict(rouge_types=[1])),
                                               Probe(rouge, dict(rouge_types=[HUGE]))]),
    R.TYPE_ORDER_RULE: (r"ROUGE-N accepts n from 1 to 100", [Probe(rouge, dict(rouge_types=["rouge101"])),
                                                             Probe(rouge, dict(rouge_types=["rouge" + "9" * 5000]))]),
    R.SKIP_GAP_RULE: (r"or rougeS\* / rougeSU\* for any gap",
                      [Probe(rouge, dict(rouge_types=["rougeS1000001"])),
                       Probe(rouge, dict(rouge_types=["rougeSU" + "9" * 5000]))]),
    R.TYPE_LIST_RULE: (r"`rouge_types` (is empty|has duplicates|is int .*not a list of type names)",
                       [Probe(rouge, dict(rouge_types=[])), Probe(rouge, dict(rouge_types=["rouge1", "rouge1"])),
                        Probe(rouge, dict(rouge_types=HUGE))]),
    R.TOKENIZER_RULE: (r"Unknown tokenizer=|is a class; pass an instance|is neither a name of",
                       [Probe(rouge, dict(tokenizer="nope")), Probe(rouge, dict(tokenizer=str)),
                        Probe(rouge, dict(tokenizer=3)), Probe(rouge, dict(tokenizer=HUGE))]),
    R.TOKENIZER_OUTPUT_RULE: (r"it must return a list of tokens|every token must be a str",
                              [Probe(rouge, dict(tokenizer=_returns_a_string)),
                               Probe(rouge, dict(tokenizer=_returns_ints)),
                               Probe(rouge, dict(tokenizer=_returns_a_huge_int)),
                               Probe(rouge, dict(tokenizer=_returns_huge_ints))]),
    R.STEMMER_RULE: (r"Unknown use_stemmer=", [Probe(rouge, dict(use_stemmer="snowball")),
                                               Probe(rouge, dict(use_stemmer=1)), Probe(rouge, dict(use_stemmer=HUGE))]),
    R.CALLABLE_STEMMING_RULE: (r"with a callable tokenizer .*Stem or filter inside the callable",
                               [Probe(rouge, dict(tokenizer=_split_on_space, use_stemmer=True)),
                                Probe(rouge, dict(tokenizer=_split_on_space, remove_stopwords=True))]),
    # progress="no" would draw the bar: bool("no") is True
    R.SWITCH_RULE: (r"`(remove_stopwords|progress)` must be True or False, got ",
                    [Probe(rouge, dict(remove_stopwords="no")), Probe(rouge, dict(remove_stopwords=HUGE)),
                     Probe(rouge, dict(progress="no")), Probe(rouge, dict(progress=1)),
                     Probe(rouge, dict(progress=HUGE))]),
    R.CHOICE_RULE: (r"Unknown (multi_ref|rouge_w_normalization|aggregation)=",
                    [Probe(rouge, dict(multi_ref="max")), Probe(rouge, dict(rouge_w_normalization="lin")),
                     Probe(rouge, dict(aggregation="mean")), Probe(rouge, dict(multi_ref=HUGE)),
                     Probe(rouge, dict(rouge_w_normalization=HUGE)), Probe(rouge, dict(aggregation=-HUGE))]),
    R.BETA_RULE: (r"beta=.* must be a finite positive number",
                  [Probe(rouge, dict(beta=0.0)), Probe(rouge, dict(beta=float("inf"))), Probe(rouge, dict(beta="1")),
                   Probe(rouge, dict(beta=HUGE)), Probe(rouge, dict(beta=-HUGE))]),
    R.ROUGE_W_WEIGHT_RULE: (r"rouge_w_weight=.* must be a finite number >= 1",
                            [Probe(rouge, dict(rouge_w_weight=0.5)), Probe(rouge, dict(rouge_w_weight=float("nan"))),
                             Probe(rouge, dict(rouge_w_weight=HUGE))]),
    R.ROUGE_W_OVERFLOW_RULE: (r"is too large for a text of \d+ tokens.*keeps them finite",
                              [Probe(rouge, dict(rouge_types=["rougeW"], rouge_w_weight=1000.0), (LONG, LONG))]),
    R.N_BOOTSTRAP_RULE: (r"n_bootstrap=.* must be a non-negative integer .*, at most 1,000,000",
                         [Probe(rouge, dict(n_bootstrap=-1)), Probe(rouge, dict(n_bootstrap=1.5)),
                          Probe(rouge, dict(n_bootstrap=1_000_001)), Probe(rouge, dict(n_bootstrap=HUGE))]),
    R.ROUGE155_RESAMPLES_RULE: (r"aggregation='rouge155' needs n_bootstrap >= 1",
                                [Probe(rouge, dict(aggregation="rouge155", n_bootstrap=0))]),
    R.CONFIDENCE_RULE: (r"confidence=.* must be a number strictly between 0 and 1",
                        [Probe(rouge, dict(confidence=95)), Probe(rouge, dict(confidence=1.0)),
                         Probe(rouge, dict(confidence=HUGE))]),
    R.SEED_RULE: (r"`seed` must be an integer between 0 and 2\*\*64 - 1 or None, got ",
                  [Probe(rouge, dict(seed=-1)), Probe(rouge, dict(seed=0.5)), Probe(rouge, dict(seed=2**64)),
                   Probe(rouge, dict(seed=HUGE)), Probe(rouge, dict(seed=-HUGE))]),
}

bleu, corpus_bleu, sentence_bleu = bleu_package.bleu, bleu_package.corpus_bleu, bleu_package.sentence_bleu
B = bleu_rules
BLEU: dict[Refusal, tuple[str, list[Probe]]] = {
    B.TOKENIZE_RULE: (r"Unknown tokenize=", [Probe(bleu, dict(tokenize="moses")), Probe(bleu, dict(tokenize=None)),
                                             Probe(corpus_bleu, dict(tokenize="moses"), (PREDS, [REFS])),
                                             Probe(bleu, dict(tokenize=HUGE))]),
    B.SMOOTH_METHOD_RULE: (r"Unknown smooth_method=", [Probe(bleu, dict(smooth_method="add")),
                                                       Probe(bleu, dict(smooth_method=HUGE))]),
    B.SMOOTH_VALUE_RULE: (r"smooth_value=.* must be a non-negative number or None",
                          [Probe(bleu, dict(smooth_value=-1.0)), Probe(bleu, dict(smooth_value=float("inf"))),
                           Probe(bleu, dict(smooth_value=HUGE)), Probe(bleu, dict(smooth_value=-HUGE))]),
    B.ORDER_RULE: (r"max_ngram_order=.* must be a positive integer .*, at most 100",
                   [Probe(bleu, dict(max_ngram_order=0)), Probe(bleu, dict(max_ngram_order=2.0)),
                    Probe(bleu, dict(max_ngram_order=101)), Probe(bleu, dict(max_ngram_order=HUGE)),
                    Probe(bleu_package.bleu_statistics, dict(max_ngram_order=HUGE))]),
    B.SWITCH_RULE: (r"`\w+` must be True or False, got ",
                    [Probe(bleu, dict(lowercase="no")), Probe(bleu, dict(effective_order=1)),
                     Probe(corpus_bleu, dict(force="no"), (PREDS, [REFS])),
                     Probe(sentence_bleu, dict(use_effective_order="no"), ("a b c", REFS)),
                     Probe(bleu, dict(lowercase=HUGE)), Probe(bleu, dict(effective_order=-HUGE)),
                     Probe(corpus_bleu, dict(force=HUGE), (PREDS, [REFS])),
                     Probe(sentence_bleu, dict(use_effective_order=HUGE), ("a b c", REFS))]),
    B.STREAMS_RULE: (r"corpus_bleu takes sacrebleu's layout",
                     [Probe(corpus_bleu, args=(PREDS, REFS)), Probe(corpus_bleu, args=(PREDS, [["a"], ["b", "c"]]))]),
    # negative or NaN entries once reached math.log ("math domain error")
    B.STATISTICS_RULE: (r"summed (has shape \(3,\); expected \(10,\) or \(n, 10\)|must hold finite non-negative counts)",
                        [Probe(bleu_package.bleu_from_statistics, args=([1, 2, 3],)),
                         Probe(bleu_package.bleu_from_statistics, args=([4, 4, -1, 3, 2, 1, 4, 3, 2, 1],)),
                         Probe(bleu_package.bleu_from_statistics, args=([4, 4, 4, 3, 2, 1, 4, 3, 2, float("nan")],)),
                         Probe(bleu_package.bleu_from_statistics, args=([[4, 4, 4, 3, 2, 1, 4, 3, 2, -1]],)),
                         Probe(bleu_package.bleu_from_statistics, args=([HUGE] * 10,))]),
}

chrf, chrf_statistics, chrf_from_statistics = (chrf_package.chrf, chrf_package.chrf_statistics,
                                               chrf_package.chrf_from_statistics)
C = chrf_rules
CHRF: dict[Refusal, tuple[str, list[Probe]]] = {
    C.ORDER_RULE: (r"(char|word)_order=.* must be a non-negative integer .*, at most 100",
                   [Probe(chrf, dict(char_order=-1)), Probe(chrf, dict(word_order=-1)),
                    Probe(chrf, dict(char_order=2.0)), Probe(chrf, dict(word_order=101)),
                    Probe(chrf, dict(char_order=HUGE)), Probe(chrf, dict(word_order=-HUGE)),
                    Probe(chrf_statistics, dict(char_order=HUGE)),
                    Probe(chrf_from_statistics, dict(word_order=HUGE), ([0] * 18,))]),
    C.NO_NGRAM_RULE: (r"leave no n-grams to compare", [Probe(chrf, dict(char_order=0, word_order=0))]),
    # an integer beyond float64 (10**400) is no finite number; 0 is accepted (precision only, as sacrebleu)
    C.BETA_RULE: (r"beta=.* must be a finite number >= 0", [Probe(chrf, dict(beta=-1)), Probe(chrf, dict(beta=-2.0)),
                                                          Probe(chrf, dict(beta=float("nan"))),
                                                          Probe(chrf, dict(beta=10**400)),
                                                          Probe(chrf, dict(beta=HUGE)), Probe(chrf, dict(beta=-HUGE))]),
    C.BETA_RANGE_RULE: (r"beta\*\*2 must fit a float, so beta <= 1e\+150",
                        [Probe(chrf, dict(beta=1e151)), Probe(chrf, dict(beta=1.5e300))]),
    C.SWITCH_RULE: (r"`\w+` must be True or False, got ",
                    [Probe(chrf, dict(lowercase="no")), Probe(chrf, dict(whitespace=1)),
                     Probe(chrf, dict(eps_smoothing=None)), Probe(chrf, dict(lowercase=HUGE)),
                     Probe(chrf, dict(whitespace=-HUGE)), Probe(chrf, dict(eps_smoothing=HUGE))]),
    C.OPTION_NAME_RULE: (r"unexpected keyword argument 'tokenize': the options of chrF are",
                         [Probe(chrf_statistics, dict(tokenize="13a")),
                          Probe(chrf_from_statistics, dict(tokenize="13a"), ([0] * 18,))]),
    C.STATISTICS_RULE: (r"summed_stats (has shape|must hold finite non-negative counts)",
                        [Probe(chrf_from_statistics, args=([1, 2, 3],)),
                         Probe(chrf_from_statistics, args=([-1] * 18,)),
                         Probe(chrf_from_statistics, args=([HUGE] * 18,))]),
}

ter, ter_statistics, ter_from_statistics = ter_package.ter, ter_package.ter_statistics, ter_package.ter_from_statistics
T = ter_rules
TER: dict[Refusal, tuple[str, list[Probe]]] = {
    T.SWITCH_RULE: (r"`\w+` must be True or False, got ",
                    [Probe(ter, {name: value}) for name in ("normalized", "no_punct", "asian_support", "case_sensitive",
                                                            "normalize_references_twice") for value in ("no", HUGE)]),
    T.TWICE_RULE: (r"normalize_references_twice=True only acts with normalized=True",
                   [Probe(ter, dict(normalize_references_twice=True)),
                    Probe(ter, dict(normalized=False, normalize_references_twice=True))]),
    T.OPTION_NAME_RULE: (r"unexpected keyword argument 'lowercase': the options of TER are",
                         [Probe(ter_statistics, dict(lowercase=True)),
                          Probe(ter_from_statistics, dict(lowercase=True), ([0, 1],))]),
    T.STATISTICS_RULE: (r"summed_stats (has shape|must hold finite non-negative numbers)",
                        [Probe(ter_from_statistics, args=([1, 2, 3],)),
                         Probe(ter_from_statistics, args=([1.0, float("nan")],)),
                         Probe(ter_from_statistics, args=([HUGE, 1],))]),
}

#: metric -> (its package, its probes by rule)
TEXT_METRICS: dict[str, tuple[Any, dict[Refusal, tuple[str, list[Probe]]]]] = {
    "rouge_family": (rouge_package, ROUGE), "bleu": (bleu_package, BLEU), "chrf": (chrf_package, CHRF),
    "ter": (ter_package, TER),
}
#: metric -> its public functions whose options the rules must cover
FUNCTIONS: dict[str, list[Callable[..., Any]]] = {
    "rouge_family": [rouge],
    "bleu": [bleu, corpus_bleu, sentence_bleu, bleu_package.BleuScorer],
    "chrf": [chrf, chrf_package.chrf_plus_plus, chrf_statistics, chrf_from_statistics],
    "ter": [ter, ter_statistics, ter_from_statistics],
}
#: Arguments no rule needs to name: the inputs (checked alike by every metric, see core.validation)
#: and options that take any value.
INPUTS = {"predictions", "references", "hypotheses", "hypothesis", "self"}
UNCHECKED: dict[str, dict[str, str]] = {}


# ------------------------------------------------------------------------------------------------
# the text metrics: every rule fires, every refusal has a rule, every option has a rule


def _refusal(probe: Probe) -> BaseException:
    try:
        probe.function(*probe.args, **probe.kwargs)
    except (ValueError, TypeError) as error:
        return error
    raise AssertionError(f"{probe} was accepted; its rule says it is refused")


@pytest.mark.parametrize("metric", sorted(TEXT_METRICS))
def test_every_listed_rule_fires_on_its_probes(metric):
    """Each rule of the metric's list has probes; each probe is refused (ValueError/TypeError)
    with a message matching the rule's pattern, and the probes pass every option the rule names."""
    package, table = TEXT_METRICS[metric]
    assert list(table) == list(package.RULES), f"{metric}: the probes' rules are not the listed RULES, in order"
    assert package.refusals() == [rule.sentence() for rule in package.RULES]
    for rule, (pattern, probes) in table.items():
        assert probes, rule
        for probe in probes:
            error = _refusal(probe)
            assert re.search(pattern, str(error), re.DOTALL), (str(probe), rule.refused, str(error))
        passed = set().union(*(probe.arguments() for probe in probes))
        assert set(rule.options) <= passed, (rule.refused, set(rule.options) - passed)


@pytest.mark.parametrize("metric", sorted(m for m in TEXT_METRICS if OUTSIDE[m]))
def test_every_documented_out_of_range_setting_is_refused_by_a_listed_rule(metric):
    """Each setting of the generated-input layer's OUTSIDE table is refused with a message that a
    listed rule about that option states (so the card names why)."""
    _, table = TEXT_METRICS[metric]
    function = library_function(metric)
    for patch in OUTSIDE[metric]:
        with pytest.raises((ValueError, TypeError)) as caught:
            function(PREDS, REFS, **patch)
        message = str(caught.value)
        covering = [rule for rule, (pattern, _) in table.items()
                    if set(rule.options) & set(patch) and re.search(pattern, message, re.DOTALL)]
        assert covering, f"{metric} {patch}: no listed rule states this refusal: {message}"


@pytest.mark.parametrize("metric", sorted(TEXT_METRICS))
def test_every_option_of_the_public_functions_is_named_by_a_rule(metric):
    """An option added to a text metric without a rule (and so without a line in the card) fails."""
    package, _ = TEXT_METRICS[metric]
    named = {option for rule in package.RULES for option in rule.options}
    for function in FUNCTIONS[metric]:
        parameters = inspect.signature(function).parameters
        missing = set(parameters) - INPUTS - named - set(UNCHECKED.get(metric, {}))
        assert not missing, f"{metric}: {function.__name__} takes {sorted(missing)}, which no rule names"


def _holds_huge_int(value: Any) -> bool:
    """``value`` is, or is a list holding, an integer too long to print."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, int) and abs(v) > 10**4300 for v in values)


@pytest.mark.parametrize("metric", sorted(TEXT_METRICS))
def test_every_option_is_probed_with_an_integer_too_long_to_print(metric):
    """Each option of the metric's public functions (and each statistics argument) is given
    :data:`HUGE` by some probe, which the rule tests require to be refused with the rule's own
    message; before, the message's ``{value!r}`` raised Python's "Exceeds the limit (4300 digits)"."""
    _, table = TEXT_METRICS[metric]
    probed = {name for _, probes in table.values() for probe in probes
              for name, value in probe.arguments_with_values().items() if _holds_huge_int(value)}
    for function in FUNCTIONS[metric]:
        options = set(inspect.signature(function).parameters) - INPUTS - {"options"}
        assert options <= probed, f"{metric}: {function.__name__}'s {sorted(options - probed)} have no HUGE probe"


@pytest.mark.parametrize("metric", sorted(TEXT_METRICS))
def test_no_refusal_message_is_pythons_integer_conversion_limit(metric):
    """Every probe's refusal is a message of ours: Python's limit message names no option."""
    _, table = TEXT_METRICS[metric]
    for _, probes in table.values():
        for probe in probes:
            assert "Exceeds the limit" not in str(_refusal(probe)), str(probe)


def test_a_rouge_tokenizer_splitting_on_spaces_is_no_refusal():
    """The probes' callable tokenizer is refused for stemming, not for what it is."""
    assert rouge(PREDS, REFS, tokenizer=_split_on_space, rouge_types=["rouge1"], n_bootstrap=0).scores["rouge1"] == [
        pytest.approx(2 / 3)]


# ------------------------------------------------------------------------------------------------
# the cards' sections


SPACES = [folder.name for folder in release.space_folders(ROOT)]


def _section(text: str) -> str:
    start = text.index(release.REFUSALS_START)
    end = text.index(release.REFUSALS_END, start)
    return text[start:end + len(release.REFUSALS_END)] + "\n"


def test_every_card_has_a_refusal_list():
    assert sorted(release.CARD_REFUSALS) == sorted(SPACES)


@pytest.mark.parametrize("name", SPACES)
def test_card_section_is_what_the_command_writes(name):
    """The committed section is ``refusals_section(name)``: run `python scripts/release.py write`
    after changing a rule. It lists every sentence of the metric's refusals(), once."""
    card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    assert card.count(release.REFUSALS_START) == 1 and card.count(release.REFUSALS_END) == 1, name
    section = _section(card)
    assert section == release.refusals_section(name), (
        f"metrics/{name}/README.md: the refusals section is stale; run `python scripts/release.py write`")
    bullets = [line[2:] for line in section.splitlines() if line.startswith("- Refused: ")]
    sentences = [s for source in release.CARD_REFUSALS[name] for s in source.sentences()]
    assert set(bullets) == set(sentences) and len(bullets) == len(set(bullets)), name
    # the section sits before the citation, and its heading is a second-level one
    assert card.index(release.REFUSALS_START) < card.index("## Citation")
    assert "\n## What we refuse and why\n" in section


def test_blanc_card_lists_both_variants():
    import nlgmetrics.blanc as blanc

    section = _section((ROOT / "metrics" / "blanc" / "README.md").read_text(encoding="utf-8"))
    help_only, tune_only = section.split('BLANC-help (`variant="help"`) only:')[1].split(
        'BLANC-tune (`variant="tune"`) only:')
    shared = section.split("Both variants:")[1].split("BLANC-help")[0]
    for sentence in blanc.refusals("tune"):
        assert sentence in (shared if sentence in blanc.refusals("help") else tune_only), sentence
    for sentence in blanc.refusals("help"):
        assert sentence in (shared if sentence in blanc.refusals("tune") else help_only), sentence
    assert "`seed`" in tune_only and "2**64 - 1" in tune_only and "`seed`" not in shared + help_only


def test_a_stale_or_missing_section_is_reported_and_rewritten(tmp_path):
    """The check fails on a card whose section was edited by hand or lost, and `write` restores it
    (in a copy of the checkout's release inputs)."""
    for part in ("pyproject.toml", "src/nlgmetrics/__init__.py", "scripts/install.sh"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / part, tmp_path / part)
    shutil.copytree(ROOT / "metrics", tmp_path / "metrics", ignore=shutil.ignore_patterns("__pycache__"))
    assert release.stale_files(tmp_path) == []
    ter_card, bleu_card = tmp_path / "metrics" / "ter" / "README.md", tmp_path / "metrics" / "bleu" / "README.md"
    original_ter, original_bleu = ter_card.read_text(), bleu_card.read_text()
    ter_card.write_text(original_ter.replace("- Refused: `normalize_references_twice=True`", "- Refused: `x`"))
    bleu_card.write_text(original_bleu.replace(_section(original_bleu), ""))
    problems = release.stale_files(tmp_path)
    assert [p.split(":")[0] for p in problems] == ["metrics/bleu/README.md", "metrics/ter/README.md"], problems
    release.write(tmp_path)
    assert ter_card.read_text() == original_ter and bleu_card.read_text() == original_bleu
    assert release.stale_files(tmp_path) == []


def test_card_with_refusals_replaces_inserts_and_keeps_a_lone_marker():
    section = f"{release.REFUSALS_START} x -->\n## What we refuse and why\n\n- Refused: b.\n{release.REFUSALS_END}\n"
    old = f"{release.REFUSALS_START} x -->\n## What we refuse and why\n\n- Refused: a.\n{release.REFUSALS_END}\n"
    card = "# Card\n\n## Edge cases\n\ntext\n\n## Citation\n\nbib\n"
    inserted = release.card_with_refusals(card, section)
    assert inserted == "# Card\n\n## Edge cases\n\ntext\n\n" + section + "\n## Citation\n\nbib\n"
    assert release.card_with_refusals(inserted, section) == inserted  # idempotent
    assert release.card_with_refusals(inserted.replace(section, old), section) == inserted
    assert release.card_with_refusals("# Card\n", section) == "# Card\n\n" + section
    lone = card + release.REFUSALS_END + "\n"
    assert release.card_with_refusals(lone, section) == lone


def test_refusals_section_docstring_example():
    import doctest

    finder = doctest.DocTestFinder()
    tests = finder.find(release.refusals_section, "refusals_section", globs=vars(release))
    runner = doctest.DocTestRunner()
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0 and sum(len(t.examples) for t in tests) == 1


# ------------------------------------------------------------------------------------------------
# card statements the rules changed


def test_infolm_card_says_an_alpha_divergence_beyond_float64_is_refused():
    from nlgmetrics.infolm import ALPHA_DIVERGENCE_FINITE_RANGE

    card = " ".join((ROOT / "metrics" / "infolm" / "README.md").read_text(encoding="utf-8").split())
    assert "reported as the largest float" not in card and "one** warning per call, and the mean" not in card
    low, high = ALPHA_DIVERGENCE_FINITE_RANGE
    assert f"[{low:g}, {high:g}]" in card and "refused" in card


@pytest.mark.parametrize("name", ["infolm", "shannon_score", "blanc", "fflm"])
def test_lm_cards_say_token_budget_none_is_the_default_budget(name):
    card = " ".join((ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8").split())
    line = card[card.index("**token_budget**"):][:400]
    assert "None" in line and "default" in line, line


@pytest.mark.parametrize("metric", sorted(TEXT_METRICS))
def test_switches_are_refused_under_the_metrics_own_listed_rule_with_cores_wording(metric):
    """Every metric checks its switches with core's check_switches: the error carries the listed
    switch rule (core's switch_rule with the metric's names) and core's one message."""
    package, _ = TEXT_METRICS[metric]
    rule = sys.modules[f"nlgmetrics.{package.__name__.rsplit('.', 1)[1]}.refusals"].SWITCH_RULE
    assert rule in package.RULES and rule.refused.startswith("a switch (`")
    function = library_function(metric)
    for name in rule.options:
        if name not in inspect.signature(function).parameters:
            continue  # sacrebleu's names of corpus_bleu and sentence_bleu are probed above
        with pytest.raises(OptionError) as caught:
            function(PREDS, REFS, **{name: "no"})
        assert caught.value.refusal is rule
        assert str(caught.value) == f"`{name}` must be True or False, got 'no'."


def test_rouges_seed_is_refused_under_cores_seed_rule():
    with pytest.raises(OptionError) as caught:
        rouge(PREDS, REFS, seed=-1)
    assert caught.value.refusal is R.SEED_RULE and R.SEED_RULE.options == ("seed",)
    assert str(caught.value) == ("`seed` must be an integer between 0 and 2**64 - 1 or None, got -1 (torch's "
                                 "generator takes no larger seed and numpy's no negative one).")
