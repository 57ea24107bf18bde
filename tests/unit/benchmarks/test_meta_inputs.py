"""The meta-evaluation runner's inputs and statistics: ``--scores`` files, the generic ``--data``
loader, the significant-documents and pooled levels, REALSumm's ROUGE baselines, cache-only rebuilds.

Expected numbers come from naive scipy loops written here, never from the runner itself.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from benchmarks.meta.runner import main as meta_main
from benchmarks.meta.runner import run as meta_run

REPO = Path(__file__).resolve().parents[3]

# ------------------------------------------------------------------------------------------------
# files written by the tests: 8 documents x 5 systems, a human score and two metric columns


N_DOCS, SYSTEMS = 8, ("A", "B", "C", "D", "E")


def _rows(seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(N_DOCS):
        for k, s in enumerate(SYSTEMS):
            quality = k + rng.normal(0, 1.5)
            rows.append({
                "item": d, "sys": s, "q": round(float(quality), 3),
                "out": f"the cat number {k} sat on mat {d}", "ref": [f"the cat number {(k + d) % 5} sat on the mat {d}"],
                "good": round(float(quality + rng.normal(0, 1.5)), 4), "noisy": round(float(rng.normal()), 4),
            })
    return rows


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _write_csv(path, rows, columns):
    path.write_text(",".join(columns) + "\n" + "".join(",".join(str(r[c]) for c in columns) + "\n" for r in rows))
    return path


def _run(tmp_path, *argv):
    out = tmp_path / "out"
    assert meta_main([*argv, "--bootstrap", "50", "--out-dir", str(out), "--cache-dir", str(tmp_path / "cache"),
                      "--no-plots"]) == 0
    return out


def _error_line(stderr: str, prog: str) -> str:
    """The one error line an entry point may print (progress lines may come before it); no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and stderr.rstrip().splitlines()[-1] == errors[0], stderr
    assert errors[0].startswith(f"{prog}: error: "), errors[0]
    return errors[0]


def _result(record, metric, level, method, human="q", split="all"):
    return next(r for r in record["tables"]["results"] if (r["metric"], r["level"], r["method"], r["human"], r["split"])
                == (metric, level, method, human, split))


def _naive(rows, column, method):
    """Per-document (value, p) lists, the pooled value and the system-level value, by scipy loops."""
    test = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    per_doc = []
    for d in range(N_DOCS):
        sub = [r for r in rows if r["item"] == d]
        res = test([r[column] for r in sub], [r["q"] for r in sub])
        per_doc.append((float(res[0]), float(res[1])))
    pooled = float(test([r[column] for r in rows], [r["q"] for r in rows])[0])
    means = [(np.mean([r[column] for r in rows if r["sys"] == s]), np.mean([r["q"] for r in rows if r["sys"] == s]))
             for s in SYSTEMS]
    system = float(test([m for m, _ in means], [h for _, h in means])[0])
    return per_doc, pooled, system


def test_generic_data_with_user_scores_matches_scipy(tmp_path):
    rows = _rows()
    data = _write_jsonl(tmp_path / "judgments.jsonl", rows)
    scores = _write_csv(tmp_path / "mine.csv", rows, ["item", "sys", "good", "noisy"])
    out = _run(tmp_path, "--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q",
               "--metrics", "none", "--scores", str(scores), "--baseline", "noisy", "--tag", "t")
    record = json.loads((out / "judgments_t.json").read_text())
    assert record["score_files"][0]["columns"] == ["good", "noisy"]
    for method in ("pearson", "spearman", "kendall"):
        per_doc, pooled, system = _naive(rows, "good", method)
        assert _result(record, "good", "text", method)["value"] == pytest.approx(np.mean([v for v, _ in per_doc]), abs=1e-12)
        assert _result(record, "good", "pooled", method)["value"] == pytest.approx(pooled, abs=1e-12)
        assert _result(record, "good", "system", method)["value"] == pytest.approx(system, abs=1e-12)
        kept = [v for v, p in per_doc if p <= 0.05]
        sig = _result(record, "good", "text_sig", method)
        assert sig["n_used"] == len(kept) and 0 < len(kept) < N_DOCS  # the filter bites on these data
        assert sig["value"] == pytest.approx(np.mean(kept), abs=1e-12)
    md = (out / "judgments_t.md").read_text()
    # Every table says which definition it uses, and the significant variant how many documents it kept.
    assert "text level (documents with p <= 0.05 only)" in md and "pooled text level (all outputs, one correlation)" in md
    assert "Definition: pooled text level (WebNLG 2020 organisers: one correlation over every rated output" in md
    assert f"k={_result(record, 'good', 'text_sig', 'kendall')['n_used']}" in md
    assert "Command: `python -m benchmarks.meta_eval --data" in md


def test_without_out_dir_a_report_gets_its_own_results_folder(tmp_path, monkeypatch):
    """The committed results keep one folder per report: the default output is
    ``benchmarks/results/<dataset>_<tag>/`` (the repository's folder moved to tmp_path here)."""
    from benchmarks.meta import runner

    monkeypatch.setattr(runner, "_repo_benchmarks_dir", lambda: tmp_path / "benchmarks")
    rows = _rows()
    data = _write_jsonl(tmp_path / "judgments.jsonl", rows)
    scores = _write_csv(tmp_path / "mine.csv", rows, ["item", "sys", "good", "noisy"])
    assert meta_main(["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q",
                      "--metrics", "none", "--scores", str(scores), "--tag", "t", "--bootstrap", "20",
                      "--cache-dir", str(tmp_path / "cache"), "--no-plots"]) == 0
    written = sorted(p.relative_to(tmp_path / "benchmarks" / "results").as_posix()
                     for p in (tmp_path / "benchmarks" / "results").rglob("*"))
    assert written == ["judgments_t", "judgments_t/judgments_t.json", "judgments_t/judgments_t.md"]


def test_generic_data_with_text_metrics_and_parquet_scores(tmp_path):
    import datasets

    rows = _rows(1)
    data = _write_jsonl(tmp_path / "j.jsonl", rows)
    parquet = tmp_path / "s.parquet"
    datasets.Dataset.from_list([{"item": r["item"], "sys": r["sys"], "good": r["good"]} for r in rows]).to_parquet(str(parquet))
    out = _run(tmp_path, "--data", str(data), "--data-name", "toy", "--doc-key", "item", "--system-key", "sys",
               "--human", "q", "--prediction-key", "out", "--reference-key", "ref", "--metrics", "rouge155,bleu",
               "--scores", str(parquet), "--levels", "text,system", "--tag", "t")
    record = json.loads((out / "toy_t.json").read_text())
    assert record["tables"]["baseline"] == "R2-F" and record["tables"]["levels"] == ["text", "system"]
    assert {"R1-R", "RL-F", "bleu", "good"} <= {r["metric"] for r in record["tables"]["results"]}


@pytest.mark.parametrize("edit, message", [
    (lambda rows: [{k: v for k, v in r.items() if k != "sys"} for r in rows], r"no column \['sys'\]"),
    (lambda rows: rows + rows[:1], "the same key as row 1"),
    (lambda rows: rows + [{**rows[0], "item": 99}], r"1 rows join no output.*item='99'"),
    (lambda rows: [{**r, "good": "inf" if i == 3 else r["good"]} for i, r in enumerate(rows)], "row 4.*'good'.*not finite"),
    (lambda rows: [{**r, "good": "nan" if i == 2 else r["good"]} for i, r in enumerate(rows)], "row 3.*'good'.*not finite"),
])
def test_user_scores_errors_name_the_row_and_the_fix(tmp_path, capsys, edit, message):
    rows = _rows()
    data = _write_jsonl(tmp_path / "j.jsonl", rows)
    bad = edit([{"item": r["item"], "sys": r["sys"], "good": r["good"]} for r in rows])
    scores = _write_jsonl(tmp_path / "s.jsonl", bad)
    argv = ["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q", "--metrics", "none",
            "--scores", str(scores), "--out-dir", str(tmp_path / "out"), "--no-plots"]
    with pytest.raises(ValueError, match=message):
        meta_run(argv)  # the error itself, for callers of the runner's code
    assert meta_main(argv) == 2  # the entry point: one line, no traceback
    assert re.search(message, _error_line(capsys.readouterr().err, "nlgmetrics meta-eval"))


def test_generic_loader_errors(tmp_path):
    from benchmarks.meta.data import load_table_dataset

    rows = _rows()
    path = _write_jsonl(tmp_path / "j.jsonl", rows + rows[:1])
    with pytest.raises(ValueError, match=r"rows 1 and 41 both have item='0', sys='A'"):
        load_table_dataset(path, doc_key="item", system_key="sys", human=["q"])
    with pytest.raises(ValueError, match=r"no column \['quality'\]"):
        load_table_dataset(path, doc_key="item", system_key="sys", human=["quality"])
    with pytest.raises(ValueError, match="unknown file type '.txt'"):
        (tmp_path / "x.txt").write_text("a")
        load_table_dataset(tmp_path / "x.txt", doc_key="item", system_key="sys", human=["q"])
    with pytest.raises(SystemExit):  # --data without the key columns: an argparse error
        meta_main(["--data", str(path), "--human", "q"])


def test_user_scores_join_the_built_in_realsumm_keys(tmp_path):
    """REALSumm keys are (doc_id, system_type, system): ``bart_out`` is in both pools."""
    from benchmarks.meta.data import Example
    from benchmarks.meta.user_scores import read_scores_file

    exs = [Example(("0", "abs:bart_out"), "0", "abs:bart_out", "abs", "", (), "", {}),
           Example(("0", "ext:bart_out"), "0", "ext:bart_out", "ext", "", (), "", {})]
    path = _write_csv(tmp_path / "r.csv", [{"doc_id": 0, "system_type": "ext", "system": "bart_out", "m": 2.5}],
                      ["doc_id", "system_type", "system", "m"])
    scores, info = read_scores_file(path, "realsumm", ("doc_id", "system_type", "system"), exs)
    assert scores["m"][1] == 2.5 and math.isnan(scores["m"][0]) and info["n_examples_without_score"] == 1
    with pytest.raises(ValueError, match="names of metrics of this run"):
        read_scores_file(path, "realsumm", ("doc_id", "system_type", "system"), exs, reserved={"m"})


# ------------------------------------------------------------------------------------------------
# the statistics, against naive scipy loops


def test_significant_documents_and_pooled_level_equal_naive_scipy():
    from nlgmetrics.stats.correlation import per_document_p_values, pooled_level, text_level_significant

    rng = np.random.default_rng(3)
    human = np.round(rng.random((30, 9)) * 4)  # ties: Kendall's tie-corrected normal approximation
    metric = human + rng.random((30, 9)) * rng.random((30, 1)) * 6
    metric[4, 2] = np.nan  # a document with a missing cell goes through scipy directly
    untied = rng.random((30, 9))  # no ties and n <= 33: Kendall's exact p-value
    for method, test in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        for m, h in ((metric, human), (untied + human, untied)):
            values, ps = [], []
            for i in range(m.shape[0]):
                ok = ~(np.isnan(m[i]) | np.isnan(h[i]))
                res = test(m[i, ok], h[i, ok])
                values.append(float(res[0]))
                ps.append(float(res[1]))
            np.testing.assert_allclose(per_document_p_values(m, h, method), ps, rtol=1e-9, atol=1e-14)
            kept = [v for v, p in zip(values, ps) if p <= 0.05]
            result = text_level_significant(m, h, method)
            assert 0 < result.n_used == len(kept) < m.shape[0]
            assert result.value == pytest.approx(np.mean(kept), abs=1e-12)
            ok = ~(np.isnan(m) | np.isnan(h))
            assert pooled_level(m, h, method).value == pytest.approx(float(test(m[ok], h[ok])[0]), abs=1e-12)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_pooled_bootstrap_equals_correlating_each_resample(method):
    """The multiplicity formulas give what correlating the resampled rows themselves gives."""
    from nlgmetrics.stats.bootstrap import pooled_samples, resample_indices
    from nlgmetrics.stats.correlation import correlate

    rng = np.random.default_rng(5)
    human = np.round(rng.random((15, 6)) * 5)
    metric = np.round(human + rng.random((15, 6)) * 3, 1)
    metric[2, 1] = np.nan
    indices = resample_indices(15, 40, seed=1)
    got = pooled_samples(metric, human, method, indices, memo={})
    expected = []
    for row in indices:
        m, h = metric[row].ravel(), human[row].ravel()
        ok = ~(np.isnan(m) | np.isnan(h))
        expected.append(correlate(m[ok], h[ok], method))
    np.testing.assert_allclose(got, expected, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# REALSumm's classic baselines


def test_rouge155_family_uses_the_rouge155_stemmer_and_summary_level_lcs():
    from benchmarks.meta.data import Example
    from benchmarks.meta.metrics import FAMILIES, ROUGE155_DESCRIPTION
    from nlgmetrics.rouge import rouge_family

    # "dying": NLTK's Porter stems it to "die", ROUGE-1.5.5's to "dy"; two sentence lines, so the
    # summary-level LCS (rougeLsum) differs from the sentence-level one (rougeL).
    pred, ref = "the man was dying\nthe cat sat on the mat", "the cat sat on the mat\nthe man will die"
    ex = Example("k", "d", "s", "all", pred, (ref,), "", {})
    ours, signature = FAMILIES["rouge155"].fn([ex], {})
    porter, _ = FAMILIES["rouge"].fn([ex], {})
    assert "stemmer:rouge155" in signature and "stopwords:no" in signature
    # Reference: the x3, cat, sat, on, mat, man, will, die (10 tokens); matched: the x3, cat, sat, on,
    # mat, man (8); "dying" matches "die" only under Porter.
    assert ours["R1-R"][0] == pytest.approx(8 / 10)
    assert porter["rouge1_r"][0] == pytest.approx(9 / 10)
    direct = rouge_family([pred], [ref], rouge_types=["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer="rouge155",
                          n_bootstrap=0)
    for name, column in (("R1-P", "rouge1_precision"), ("R2-F", "rouge2"), ("RL-R", "rougeLsum_recall"), ("RL-F", "rougeLsum")):
        assert ours[name][0] == direct.scores[column][0]
    assert ours["RL-R"][0] != direct.scores["rougeL_recall"][0]
    assert "use_stemmer='rouge155'" in ROUGE155_DESCRIPTION and "rougeLsum = Perl ROUGE-L" in ROUGE155_DESCRIPTION


def test_realsumm_table_labels_its_rouge_settings(tmp_path, shared_data_dir):
    out = _run(tmp_path, "--datasets", "realsumm", "--metrics", "rouge,rouge155", "--max-docs", "4",
               "--data-dir", str(shared_data_dir), "--tag", "t")
    record = json.loads((out / "realsumm_t.json").read_text())
    md = (out / "realsumm_t.md").read_text()
    assert record["tables"]["baseline"] == "R2-F"
    assert record["tables"]["levels"] == ["text", "text_sig", "system"]
    assert "ROUGE as REALSumm: R1/R2/RL-R/P/F" in md and "NLTK's Porter stemmer" in md
    assert "Baseline: `R2-F`" in md


def test_chrf_family_equals_sacrebleu():
    import sacrebleu

    from benchmarks.meta.data import Example
    from benchmarks.meta.metrics import FAMILIES

    rows = [("the cat sat on the mat", ("a cat sat on a mat", "the cat is on the mat")), ("dogs bark", ("a dog barks",))]
    exs = [Example(str(i), str(i), "s", "all", p, refs, "", {}) for i, (p, refs) in enumerate(rows)]
    scores, signature = FAMILIES["chrf"].fn(exs, {})
    for name, word_order in (("chrF", 0), ("chrF++", 2)):
        expected = [sacrebleu.metrics.CHRF(word_order=word_order).sentence_score(p, list(refs)).score for p, refs in rows]
        assert scores[name] == pytest.approx(expected, abs=1e-9)
    assert "word_order:0" in signature and "word_order:2" in signature


# ------------------------------------------------------------------------------------------------
# tables rebuilt from stored scores; dtype in the cache key


def test_from_scores_rebuilds_the_same_tables_without_computing(tmp_path):
    rows = _rows(2)
    data = _write_jsonl(tmp_path / "j.jsonl", rows)
    common = ["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q",
              "--prediction-key", "out", "--reference-key", "ref", "--metrics", "rouge155,bleu"]
    first = json.loads((_run(tmp_path, *common, "--tag", "a") / "j_a.json").read_text())
    stored = tmp_path / "stored"
    (tmp_path / "cache").rename(stored)
    out = tmp_path / "out"
    # Stored scores as a read-only second --cache-dir; the first (empty) one is where new scores would go.
    assert meta_main([*common, "--from-scores", "--bootstrap", "50", "--out-dir", str(out), "--no-plots", "--tag", "b",
                      "--cache-dir", str(tmp_path / "new"), "--cache-dir", str(stored)]) == 0
    second = json.loads((out / "j_b.json").read_text())
    assert not (tmp_path / "new").exists()  # nothing computed, nothing written
    assert [r["computed"] for r in second["metric_runs"]] == [0, 0]
    assert second["tables"]["results"] == first["tables"]["results"]
    # A missing stored score: that output is dropped (and counted), not recomputed.
    path = next(stored.rglob("bleu-*.jsonl"))
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["scores"].pop(next(iter(record["scores"])))
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    assert meta_main([*common, "--from-scores", "--bootstrap", "50", "--out-dir", str(out), "--no-plots", "--tag", "c",
                      "--cache-dir", str(stored)]) == 0
    third = json.loads((out / "j_c.json").read_text())
    bleu = next(r for r in third["metric_runs"] if r["family"] == "bleu")
    assert bleu["missing"] == 1 and bleu["computed"] == 0 and third["tables"]["n_examples_dropped"] == 1
    assert "1 missing**" in (out / "j_c.md").read_text()


def test_dtype_is_in_the_cache_key_only_when_not_float32():
    from benchmarks.meta.cache import options_hash
    from benchmarks.meta.metrics import FAMILIES
    from benchmarks.meta.runner import _options, build_parser, cache_key_options

    fp32 = cache_key_options(FAMILIES["fflm"], _options(build_parser().parse_args([])))
    bf16 = cache_key_options(FAMILIES["fflm"], _options(build_parser().parse_args(["--dtype", "bf16"])))
    # The committed FFLM scores' file name: fp32 keeps it, bf16 gets a file of its own.
    assert f"fflm-{options_hash(fp32)}.jsonl" == "fflm-6af101fd11.jsonl"
    assert bf16 == {**fp32, "dtype": "bfloat16"} and options_hash(bf16) != options_hash(fp32)
    assert cache_key_options(FAMILIES["bleu"], {"dtype": "bfloat16"}) == {"family": "bleu"}
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--dtype", "int8"])


def test_speed_reads_nlgmetrics_data(monkeypatch):
    from benchmarks.speed import side_by_side as speed

    monkeypatch.setenv("NLGMETRICS_DATA", "/some/data")
    args = speed.build_parser().parse_args(["--only", "text"])
    assert str(speed.candidate_kwargs("text", args)["data_dir"]) == "/some/data"
    args = speed.build_parser().parse_args(["--data-dir", "/x"])
    assert str(speed.candidate_kwargs("text", args)["data_dir"]) == "/x"


# ------------------------------------------------------------------------------------------------
# what a user's own table can do wrong: undefined correlations, malformed files; one error style


def _with_constants(rows: list[dict]) -> list[dict]:
    """``rows`` with a constant human column ``flat`` and a constant metric column ``same``."""
    return [{**r, "flat": 3.0, "same": 0.5} for r in rows]


def test_constant_scores_say_undefined_and_why_in_cells_intervals_p_values_and_warnings(tmp_path, capsys):
    from nlgmetrics.apps.cli import main as cli_main

    rows = _with_constants(_rows(3))
    data = _write_jsonl(tmp_path / "c.jsonl", rows)
    scores = _write_csv(tmp_path / "s.csv", rows, ["item", "sys", "good", "same"])
    out = tmp_path / "out"
    assert cli_main(["meta-eval", "--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "flat,q",
                     "--metrics", "none", "--scores", str(scores), "--baseline", "same", "--bootstrap", "50",
                     "--out-dir", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-plots", "--tag", "t"]) == 0
    err, md = capsys.readouterr().err, (out / "c_t.md").read_text()
    results = json.loads((out / "c_t.json").read_text())["tables"]["results"]
    # By construction: every correlation with 'flat' or of 'same' is undefined, and why is known.
    expected = {("flat", "good"): "human scores constant", ("flat", "same"): "metric and human scores constant",
                ("q", "same"): "metric constant"}
    for entry in results:
        why = expected.get((entry["human"], entry["metric"]))
        if why is None and entry["level"] == "text_sig" and not entry["n_used"]:
            why = "no document's correlation is significant"  # 5 systems a document: p > 0.05 is common
        if why is None:
            assert "reason" not in entry and "interval_reason" not in entry
            continue
        # Undefined numbers are null in the JSON record (a bare NaN is not JSON), beside the reason.
        assert entry["value"] is None and entry["low"] is None and entry["high"] is None
        assert entry["reason"].startswith(why) and entry["interval_reason"] == entry["reason"], entry
    # Cells and intervals: no bare nan, the reason instead.
    assert not [line for line in md.splitlines() if line.startswith("|") and "nan" in line]
    assert "| **same** | undefined: metric and human scores constant in every document |" in md
    assert "undefined: human scores constant across the system means" in md
    # p-values against a constant baseline: undefined, and the cell and the record say which metric.
    good_q = [r for r in results if (r["metric"], r["human"]) == ("good", "q")]
    assert all(r["vs_baseline"]["p"] is None for r in good_q)
    assert {r["vs_baseline"]["p_reason"] for r in good_q if r["level"] == "text"} == {
        "same's correlation is undefined: metric constant in every document"}
    assert {r["vs_baseline"]["p_reason"] for r in good_q if r["level"] == "system"} == {
        "Williams test undefined: same constant (system means)"}
    assert "(vs baseline undefined: Williams test undefined: same constant (system means))" in md
    # One warning line per (human, metric) with something undefined, naming the level, metric and human column.
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 4, warnings  # flat x (good, same), q x same, q x good (its p-values)
    flat_good = next(line for line in warnings if "human 'flat'" in line and "metric 'good'" in line)
    for level in ("text", "text_sig", "pooled", "system"):
        assert f"{level} (pearson, spearman, kendall): human scores constant" in flat_good
    assert any("human 'q'" in line and "metric 'good'" in line and "p vs baseline 'same' undefined" in line
               for line in warnings)


_GOOD_LINES = '{"item": 0, "sys": "A", "q": 1}\n{"item": 0, "sys": "B", "q": 2}\n'


@pytest.mark.parametrize("name, content, message", [
    ("j.jsonl", _GOOD_LINES + '{"item": 0, "sys": "C", "q": \n', r"j\.jsonl: line 3 is not valid JSON \(Expecting value"),
    ("j.jsonl", _GOOD_LINES + "[0, 1]\n", r"j\.jsonl: line 3 is a JSON array, not an object"),
    ("j.jsonl", _GOOD_LINES.encode() + b'{"item": 0, "sys": "\xff", "q": 3}\n', r"j\.jsonl: line 3 is not UTF-8"),
    ("j.json", '[{"item": 0, "sys": "A", "q": 1},\n {"item": 0, "sys": "B"', r"j\.json: line 2 column \d+: not valid JSON"),
    ("j.csv", "item,sys,q\n0,A,1\n0,B,2,7\n", r"j\.csv: not a readable csv table .*Expected 3 fields in line 3"),
])
def test_malformed_data_file_names_the_file_and_the_line(tmp_path, capsys, name, content, message):
    from benchmarks.meta.data import load_table_dataset

    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError, match=message):
        load_table_dataset(path, doc_key="item", system_key="sys", human=["q"])
    assert meta_main(["--data", str(path), "--doc-key", "item", "--system-key", "sys", "--human", "q",
                      "--metrics", "none", "--scores", str(path)]) == 2
    assert re.search(message, _error_line(capsys.readouterr().err, "nlgmetrics meta-eval"))


def test_malformed_built_in_dataset_file_names_the_line(tmp_path):
    from benchmarks.meta.data import WEBNLG_FILE, load_webnlg2020

    path = tmp_path / WEBNLG_FILE
    path.parent.mkdir(parents=True)
    path.write_text('{"sample_id": 1}\n{"sample_id": 2,,}\n')
    with pytest.raises(ValueError, match=r"humeval_en\.jsonl: line 2 is not valid JSON"):
        load_webnlg2020(tmp_path)


@pytest.mark.parametrize("case", ["nan score", "duplicate key", "missing column"])
def test_both_entry_points_report_a_user_error_in_one_line(tmp_path, capsys, case):
    """``python -m benchmarks.meta_eval`` and ``nlgmetrics meta-eval``: the same one line, status 2."""
    from nlgmetrics.apps.cli import main as cli_main

    rows = _rows()
    data = _write_jsonl(tmp_path / "j.jsonl", rows + rows[:1] if case == "duplicate key" else rows)
    scores = _write_csv(tmp_path / "s.csv", [{**r, "good": "nan" if i == 2 else r["good"]} for i, r in enumerate(rows)],
                        ["item", "sys", "good"])
    human = "nope" if case == "missing column" else "q"
    argv = ["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", human, "--metrics", "none",
            "--scores", str(scores), "--out-dir", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
            "--no-plots", "--bootstrap", "20"]
    message = {"nan score": r"s\.csv row 3 .*column 'good': no value \(an empty cell, null or NaN\)",
               "duplicate key": r"j\.jsonl: rows 1 and 41 both have item='0', sys='A'",
               "missing column": r"j\.jsonl: no column \['nope'\]"}[case]
    done = subprocess.run([sys.executable, "-m", "benchmarks.meta_eval", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2
    module_line = _error_line(done.stderr, "python -m benchmarks.meta_eval")
    assert re.search(message, module_line)
    assert cli_main(["meta-eval", *argv]) == 2
    cli_line = _error_line(capsys.readouterr().err, "nlgmetrics meta-eval")
    assert cli_line.split(": error: ", 1)[1] == module_line.split(": error: ", 1)[1]


def test_meta_eval_outside_a_checkout_says_where_the_runner_is(monkeypatch, capsys):
    """The runner is benchmark code, not in the installed package: the CLI says so in one line."""
    import importlib.util

    from nlgmetrics.apps import cli

    assert importlib.util.find_spec("nlgmetrics.meta") is None  # no benchmark code in the package
    assert cli.source_checkout() == REPO
    monkeypatch.setattr(cli, "source_checkout", lambda: None)
    assert cli.main(["meta-eval", "--help"]) == 2
    line = _error_line(capsys.readouterr().err, "nlgmetrics meta-eval")
    assert "python -m benchmarks.meta_eval" in line and "nlgmetrics.stats" in line
