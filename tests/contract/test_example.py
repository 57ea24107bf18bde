"""The README's main job (`python scripts/example.py`): prints each metric's number and signature."""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nlgmetrics
from nlgmetrics.bleu import bleu
from nlgmetrics.rouge import rouge_family
from tests.support.markdown_examples import REPO_ROOT


def _example_script():
    """scripts/example.py, loaded from its file (a script of the repository, not a module of the package)."""
    spec = importlib.util.spec_from_file_location("nlgmetrics_example_script", REPO_ROOT / "scripts" / "example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _example_script()
EXAMPLE, REASON_LENGTH, default_metrics, main, short_reason = (
    example.EXAMPLE, example.REASON_LENGTH, example.default_metrics, example.main, example.short_reason)


def test_the_example_is_a_script_not_a_module_of_the_package():
    assert not (Path(nlgmetrics.__file__).parent / "apps" / "example.py").exists()
    assert importlib.util.find_spec("nlgmetrics.apps.example") is None


def test_example_docstring_examples():
    result = doctest.testmod(example, verbose=False)
    assert result.attempted >= 2 and result.failed == 0



def test_example_prints_library_numbers_and_signatures(capsys):
    assert main(["--metrics", "rouge_family,bleu"]) == 0
    out = capsys.readouterr().out
    rouge = rouge_family(EXAMPLE["predictions"], EXAMPLE["references"])
    # the main score is the first requested type (rouge1 by default), a mean over the examples
    expected_1 = sum(rouge.scores["rouge1"]) / 3
    printed_1 = float(re.search(r"rouge_family\s+rouge1 = ([0-9.]+) \(higher is better\)", out).group(1))
    assert abs(printed_1 - expected_1) < 5e-5
    printed_each = re.search(r"rouge1 = .*per example: \[([0-9., ]+)\]", out).group(1)
    assert [float(v) for v in printed_each.split(", ")] == [round(v, 4) for v in rouge.scores["rouge1"]]
    corpus = bleu(EXAMPLE["predictions"], EXAMPLE["references"])
    printed_bleu = float(re.search(r"bleu\s+bleu = ([0-9.]+) \(higher is better\)", out).group(1))
    assert abs(printed_bleu - corpus.main_score) < 5e-5
    assert out.count("signature: ") == 2
    assert corpus.signature in out and rouge.signature in out


def test_example_skips_a_metric_whose_model_kind_is_wrong_with_one_line(capsys, tiny_gpt2_dir):
    assert main(["--metrics", "blanc", "--model", str(tiny_gpt2_dir)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("blanc"))
    assert "skipped:" in line and "is a causal LM" in line
    # the reason is whole sentences: the first one ends where the message's does, not mid-word
    assert "but this needs a masked LM (fill-in-the-blank, e.g. BERT)." in line


def _sacrebleu_chrf_ter():
    """sacrebleu's corpus chrF and TER of the example (references as sacrebleu's streams)."""
    sacrebleu = pytest.importorskip("sacrebleu")
    refs = [[r] if isinstance(r, str) else list(r) for r in EXAMPLE["references"]]
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(max(map(len, refs)))]
    return (sacrebleu.corpus_chrf(EXAMPLE["predictions"], streams).score,
            sacrebleu.corpus_ter(EXAMPLE["predictions"], streams).score)


def _assert_prints_chrf_and_ter(out: str) -> None:
    chrf, ter = _sacrebleu_chrf_ter()
    printed_chrf = float(re.search(r"^chrf\s+chrf = ([0-9.]+) \(higher is better\)$", out, re.MULTILINE).group(1))
    printed_ter = float(re.search(r"^ter\s+ter = ([0-9.]+) \(lower is better\)$", out, re.MULTILINE).group(1))
    assert abs(printed_chrf - chrf) < 5e-5 and abs(printed_ter - ter) < 5e-5
    assert "signature: chrf|" in out and "signature: ter|" in out


def test_example_runs_every_metric_by_default_chrf_and_ter_included(capsys):
    from nlgmetrics.registry import metric_names

    assert default_metrics() == metric_names() and {"chrf", "ter"} <= set(default_metrics())
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert all(name in help_text for name in metric_names())
    assert main(["--metrics", "chrf,ter"]) == 0
    _assert_prints_chrf_and_ter(capsys.readouterr().out)


@pytest.mark.parametrize(
    "message, limit, reason",
    [
        # the first sentence, whole, however long
        ("A first sentence that is long. Then more.", 10, "A first sentence that is long."),
        # as many whole sentences as fit; an abbreviation or a dot in parentheses ends none
        ("Model 'm' is a causal LM (e.g. GPT-2). Pass a masked model. More text here.", 60,
         "Model 'm' is a causal LM (e.g. GPT-2). Pass a masked model."),
        ("Could not load 'a.b'. It is not a local directory (offline?). Pass a directory.", 200,
         "Could not load 'a.b'. It is not a local directory (offline?). Pass a directory."),
        # only the first line
        ("One line.\nA traceback-like second line.", 200, "One line."),
        ("no final full stop", 5, "no final full stop"),
    ],
)
def test_skip_reasons_are_whole_sentences(message, limit, reason):
    assert short_reason(ValueError(message), limit=limit) == reason


def test_skip_reason_of_an_empty_message_is_the_error_type():
    assert short_reason(OSError()) == "OSError"
    assert REASON_LENGTH >= 120  # room for two of our sentences


def test_example_sh_installs_then_runs_the_example_with_its_arguments(tmp_path):
    """scripts/example.sh as it is, in a copy of the repository layout whose install step only
    records that it ran (the real one pip-installs) and whose venv is this interpreter's."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for script in ("example.sh", "example.py"):
        shutil.copy(REPO_ROOT / "scripts" / script, root / "scripts" / script)
    (root / "scripts" / "install.sh").write_text('touch "$(dirname "$0")/../installed"\n')
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "activate").write_text(f'export PATH="{Path(sys.executable).parent}:$PATH"\n')
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(["bash", str(root / "scripts" / "example.sh"), "--metrics", "chrf,ter"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (root / "installed").exists()
    _assert_prints_chrf_and_ter(done.stdout)
