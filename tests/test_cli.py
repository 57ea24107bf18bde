"""``nlgmetrics`` command line: inputs in every format, table, JSON/CSV with signatures, --help."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from nlgmetrics.cli import main

PREDICTIONS = ["the cat sat on the mat", "a dog barked at night", "rain fell all day"]
REFERENCES_A = ["the cat was on the mat", "the dog barked at night", "it rained all day long"]
REFERENCES_B = ["a cat sat on a mat", "a dog was barking", "rain fell the whole day"]
SOURCES = [
    "The cat sat on the mat all afternoon. It did not move.",
    "A dog barked at night. The neighbours complained.",
    "Rain fell all day. The river rose.",
]


def _write_lines(path, lines):
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def _direct(predictions, references):
    from nlgmetrics.bleu import corpus_bleu, sentence_bleu_batch
    from nlgmetrics.rouge import rouge_scores

    return rouge_scores(predictions, references), corpus_bleu(predictions, references), sentence_bleu_batch(
        predictions, references
    )


def test_score_txt_two_reference_files_json_and_csv(tmp_path, capsys):
    preds = _write_lines(tmp_path / "preds.txt", PREDICTIONS)
    refs_a = _write_lines(tmp_path / "refs_a.txt", REFERENCES_A)
    refs_b = _write_lines(tmp_path / "refs_b.txt", REFERENCES_B)
    out_json, out_csv = tmp_path / "scores.json", tmp_path / "scores.csv"
    status = main(["score", "-p", preds, "-r", refs_a, "-r", refs_b, "-m", "rouge_family", "bleu",
                   "--json", str(out_json), "--csv", str(out_csv), "--no-progress"])
    assert status == 0
    references = [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)]
    rouge, bleu, sentences = _direct(PREDICTIONS, references)

    table = capsys.readouterr().out
    assert "rougeL_fmeasure" in table and f"bleu signature: {bleu.signature}" in table
    payload = json.loads(out_json.read_text())
    assert payload["num_examples"] == 3
    assert payload["metrics"]["bleu"]["aggregate"]["score"] == bleu.score
    assert payload["metrics"]["bleu"]["signature"] == bleu.signature
    assert payload["metrics"]["bleu"]["per_example"]["sentence_bleu"] == [s.score for s in sentences]
    assert payload["metrics"]["rouge_family"]["per_example"]["rouge2_fmeasure"] == rouge["scores"]["rouge2"]["fmeasure"]
    assert payload["metrics"]["rouge_family"]["signature"] == rouge["signature"]

    rows = list(csv.DictReader(out_csv.open()))
    mean_bleu = [r for r in rows if r["metric"] == "bleu" and r["score"] == "score" and r["example"] == "mean"]
    assert float(mean_bleu[0]["value"]) == bleu.score and mean_bleu[0]["signature"] == bleu.signature
    row = [r for r in rows if r["example"] == "1" and r["score"] == "rougeL_recall"][0]
    assert float(row["value"]) == rouge["scores"]["rougeL"]["recall"][1]


def test_score_jsonl_and_options(tmp_path, capsys):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(
        json.dumps({"hyp": p, "refs": [a, b]}) + "\n" for p, a, b in zip(PREDICTIONS, REFERENCES_A, REFERENCES_B)
    ))
    out_json = tmp_path / "out.json"
    status = main(["score", "--data", str(path), "--prediction-column", "hyp", "--reference-column", "refs",
                   "-m", "bleu", "--option", "bleu.lowercase=true", "--option", "bleu.tokenize=char",
                   "--json", str(out_json), "--quiet", "--no-progress"])
    assert status == 0 and capsys.readouterr().out == ""
    from nlgmetrics.bleu import corpus_bleu

    want = corpus_bleu(PREDICTIONS, [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)], lowercase=True,
                       tokenize="char")
    got = json.loads(out_json.read_text())["metrics"]["bleu"]
    assert got["aggregate"]["score"] == want.score and got["signature"] == want.signature


def test_score_saved_dataset_with_lm_metric(tmp_path, tiny_gpt2_dir):
    """Reference-free metric from a `datasets` dataset saved to disk, with a per-metric model."""
    from datasets import Dataset

    from nlgmetrics.shannon import shannon_score

    folder = tmp_path / "dataset"
    Dataset.from_dict({"summary": PREDICTIONS, "document": SOURCES}).save_to_disk(str(folder))
    out_json = tmp_path / "out.json"
    status = main(["score", "--data", str(folder), "--prediction-column", "summary", "--source-column",
                   "document", "-m", "shannon_score", "--model", f"shannon_score={tiny_gpt2_dir}",
                   "--device", "cpu", "--json", str(out_json), "--quiet", "--no-progress"])
    assert status == 0
    want = shannon_score(SOURCES, PREDICTIONS, model=str(tiny_gpt2_dir), device="cpu", progress=False)
    got = json.loads(out_json.read_text())["metrics"]["shannon_score"]
    assert got["per_example"]["shannon_score"] == want.shannon_score
    assert got["per_example"]["ll_help"] == want.ll_help
    assert got["signature"] == want.signature


def test_json_dataset_file_via_datasets(tmp_path):
    from nlgmetrics.io import read_column

    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"text": t} for t in PREDICTIONS]))
    assert read_column(path, "text") == PREDICTIONS
    lsum = tmp_path / "lsum.txt"
    lsum.write_text("first sentence.\\nsecond sentence.\n")
    assert read_column(lsum, unescape=True) == ["first sentence.\nsecond sentence."]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["score", "-p", "{preds}", "-m", "bleu"], "need references"),
        (["score", "-p", "{preds}", "-r", "{short}", "-m", "bleu"], "3 predictions but 2 references"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--option", "bleu.nope=1"], "no option 'nope'"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "meteor"], "Unknown metric"),
        (["score", "-p", "{preds}", "-m", "fflm"], "need source documents"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--model", "x"], "uses a language model"),
        (["score", "-p", "{missing}", "-r", "{preds}"], "does not exist"),
    ],
)
def test_clear_errors(tmp_path, capsys, argv, message):
    paths = {
        "preds": _write_lines(tmp_path / "p.txt", PREDICTIONS),
        "short": _write_lines(tmp_path / "s.txt", PREDICTIONS[:2]),
        "missing": str(tmp_path / "missing.txt"),
    }
    status = main([arg.format(**paths) for arg in argv])
    assert status == 2
    assert message in capsys.readouterr().err


def test_help_is_complete(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for needle in ("--predictions", "--references", "--sources", "--data", "--prediction-column",
                   "--model", "--option", "--json", "--csv", "--no-progress", "information_measure",
                   "rouge_types", "smooth_method", "num_upstream", "weights", "variant"):
        assert needle in text, needle
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    for command in ("score", "meta-eval", "metrics", "demo"):
        assert command in top


def test_console_script_runs(tmp_path):
    """The installed entry point (pyproject [project.scripts]) works end to end."""
    preds = _write_lines(tmp_path / "p.txt", PREDICTIONS)
    refs = _write_lines(tmp_path / "r.txt", REFERENCES_A)
    done = subprocess.run(
        [sys.executable, "-m", "nlgmetrics.cli", "score", "-p", preds, "-r", refs, "-m", "bleu", "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    from nlgmetrics.bleu import corpus_bleu

    assert corpus_bleu(PREDICTIONS, REFERENCES_A).signature in done.stdout


def test_meta_eval_help_is_forwarded(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta-eval", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "nlgmetrics meta-eval" in text and "--datasets" in text and "--max-docs" in text


@pytest.mark.slow
def test_meta_eval_runs_on_a_slice(tmp_path, shared_data_dir):
    """`nlgmetrics meta-eval` runs the benchmark runner end to end (BLEU on 3 WebNLG items)."""
    status = main(["meta-eval", "--datasets", "webnlg2020", "--metrics", "bleu", "--max-docs", "3",
                   "--data-dir", str(shared_data_dir), "--bootstrap", "20", "--no-plots",
                   "--cache-dir", str(tmp_path / "cache"), "--out-dir", str(tmp_path / "out")])
    assert status == 0
    written = sorted(p.suffix for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert ".json" in written and ".md" in written, written
