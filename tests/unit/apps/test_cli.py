"""``nlgmetrics`` command line: inputs in every format, table, JSON/CSV with signatures, --help."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.apps.cli import main

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
    from nlgmetrics.bleu import bleu
    from nlgmetrics.rouge import rouge_family

    return rouge_family(predictions, references), bleu(predictions, references)


def test_score_txt_two_reference_files_json_and_csv(tmp_path, capsys):
    preds = _write_lines(tmp_path / "preds.txt", PREDICTIONS)
    refs_a = _write_lines(tmp_path / "refs_a.txt", REFERENCES_A)
    refs_b = _write_lines(tmp_path / "refs_b.txt", REFERENCES_B)
    out_json, out_csv = tmp_path / "scores.json", tmp_path / "scores.csv"
    status = main(["score", "-p", preds, "-r", refs_a, "-r", refs_b, "-m", "rouge_family", "bleu",
                   "--json", str(out_json), "--csv", str(out_csv), "--no-progress"])
    assert status == 0
    references = [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)]
    rouge, bleu = _direct(PREDICTIONS, references)

    table = capsys.readouterr().out
    assert "rougeL_recall" in table and f"bleu signature: {bleu.signature}" in table
    assert f"rouge_family signature: {rouge.signature}" in table
    payload = json.loads(out_json.read_text())
    assert payload["num_examples"] == 3
    assert payload["metrics"]["bleu"] == json.loads(json.dumps(bleu.to_dict()))  # the whole result
    assert payload["metrics"]["bleu"]["aggregate"]["bleu"] == bleu.main_score
    assert payload["metrics"]["bleu"]["signature"] == bleu.signature
    assert payload["metrics"]["bleu"]["scores"]["sentence_bleu"] == bleu.scores["sentence_bleu"]
    assert payload["metrics"]["rouge_family"]["scores"]["rouge2"] == rouge.scores["rouge2"]
    assert payload["metrics"]["rouge_family"]["aggregate"] == rouge.aggregate()
    assert payload["metrics"]["rouge_family"]["signature"] == rouge.signature

    rows = list(csv.DictReader(out_csv.open()))
    main_bleu = [r for r in rows if r["metric"] == "bleu" and r["score"] == "bleu" and r["example"] == "aggregate"]
    assert float(main_bleu[0]["value"]) == bleu.main_score and main_bleu[0]["signature"] == bleu.signature
    row = [r for r in rows if r["example"] == "1" and r["score"] == "rougeL_recall"][0]
    assert float(row["value"]) == rouge.scores["rougeL_recall"][1]
    per_example = [r for r in rows if r["metric"] == "bleu" and r["example"] not in ("aggregate",)]
    assert [float(r["value"]) for r in per_example] == bleu.scores["sentence_bleu"]


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
    from nlgmetrics.bleu import bleu

    want = bleu(PREDICTIONS, [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)], lowercase=True, tokenize="char")
    got = json.loads(out_json.read_text())["metrics"]["bleu"]
    assert got["aggregate"]["bleu"] == want.main_score and got["signature"] == want.signature
    assert want.main_score != bleu(PREDICTIONS, [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)]).main_score


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
    want = shannon_score(PREDICTIONS, sources=SOURCES, model=str(tiny_gpt2_dir), device="cpu", progress=False)
    got = json.loads(out_json.read_text())["metrics"]["shannon_score"]
    assert got["scores"]["shannon_score"] == want.scores["shannon_score"]
    assert got["scores"]["ll_help"] == want.scores["ll_help"]
    assert got["signature"] == want.signature


def test_json_dataset_file_via_datasets(tmp_path):
    from nlgmetrics.apps.io import read_column

    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"text": t} for t in PREDICTIONS]))
    assert read_column(path, "text") == PREDICTIONS
    lsum = tmp_path / "lsum.txt"
    lsum.write_text("first sentence.\\nsecond sentence.\n")
    assert read_column(lsum, unescape=True) == ["first sentence.\nsecond sentence."]


def _one_line_error(capsys) -> str:
    """The stderr of a failed run: exactly one line, no traceback."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["score", "-p", "{preds}", "-m", "bleu"], "need references"),
        (["score", "-p", "{preds}", "-r", "{short}", "-m", "bleu"], "3 predictions but 2 references"),
        # --limit does not hide files of different lengths (they would be paired wrongly)
        (["score", "-p", "{preds}", "-r", "{short}", "-m", "bleu", "--limit", "2"], "3 predictions but 2 references"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--option", "bleu.nope=1"], "no option 'nope'"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "meteor"], "Unknown metric"),
        (["score", "-p", "{preds}", "-m", "fflm"], "need source documents"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--model", "x"], "uses a language model"),
        (["score", "-p", "{missing}", "-r", "{preds}"], "does not exist"),
        (["score", "-p", "{latin1}", "-r", "{preds}", "-m", "bleu"], "latin1.txt is not UTF-8 text (byte 0xe9"),
        (["score", "-p", "{latin1}", "-r", "{preds}", "-m", "bleu"], "re-encode it as UTF-8"),
        (["score", "--data", "{latin1_csv}", "--prediction-column", "p", "--reference-column", "r", "-m", "bleu"],
         "latin1.csv is not UTF-8 text"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--limit", "-1"], "--limit: expected a positive integer"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--limit", "0"], "--limit: expected a positive integer"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--limit", "x"], "--limit: expected a positive integer"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "name a command"),
        (["score", "-p", "{preds}", "-r", "{preds}", "--option", "bleu.lowercase=maybe", "-m", "bleu"],
         "lowercase='maybe': expected true/false"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--option", "bleu.tokenize=nope"],
         "tokenize='nope': choose one of"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--json", "{no_dir}/out.json"], "does not exist; create it"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--csv", "{tmp}"], "is a directory"),
        (["score", "-p", "{preds}", "-r", "{preds}", "-m", "bleu", "--json", "{tmp}/a", "--csv", "{tmp}/a"],
         "name the same file"),
        (["score", "-p", "{preds}", "-s", "{preds}", "-m", "fflm", "--model", "{missing}", "--device", "cpu"],
         "missing.txt"),
    ],
)
def test_clear_errors(tmp_path, capsys, argv, message):
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 au lait\n".encode("latin-1") * 3)
    (tmp_path / "latin1.csv").write_bytes("p,r\ncaf\u00e9,the\n".encode("latin-1"))
    paths = {
        "preds": _write_lines(tmp_path / "p.txt", PREDICTIONS),
        "short": _write_lines(tmp_path / "s.txt", PREDICTIONS[:2]),
        "missing": str(tmp_path / "missing.txt"),
        "latin1": str(tmp_path / "latin1.txt"),
        "latin1_csv": str(tmp_path / "latin1.csv"),
        "no_dir": str(tmp_path / "no" / "such" / "dir"),
        "tmp": str(tmp_path),
    }
    status = main([arg.format(**paths) for arg in argv])
    assert status == 2
    assert message in _one_line_error(capsys)


@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_unwritable_output_is_refused_before_any_scoring(tmp_path, capsys, monkeypatch, flag):
    """A long LM run must not be lost at the end: the output path is checked first."""
    from nlgmetrics.core.protocol import MetricProtocol

    def must_not_run(*args, **kwargs):
        raise AssertionError("scoring started before the output path was checked")

    monkeypatch.setattr(MetricProtocol, "run", must_not_run)
    preds = _write_lines(tmp_path / "p.txt", PREDICTIONS)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):
            target = str(locked / "out")
        elif os.path.exists("/proc/version"):  # root ignores permissions, not procfs
            target = "/proc/version"
        else:
            pytest.skip("no unwritable path available to this user")
        status = main(["score", "-p", preds, "-r", preds, "-m", "bleu", flag, target, "--no-progress"])
    finally:
        locked.chmod(0o700)
    assert status == 2
    line = _one_line_error(capsys)
    assert flag in line and "cannot be written" in line, line
    assert not list(locked.iterdir())
    # a file where a directory is expected
    assert main(["score", "-p", preds, "-r", preds, "-m", "bleu", flag, f"{preds}/out", "--no-progress"]) == 2
    assert "is a file, not a directory" in _one_line_error(capsys)


def test_output_check_leaves_no_file_and_keeps_existing_ones(tmp_path):
    from nlgmetrics.apps.cli import check_output_paths

    new, old = tmp_path / "new.json", tmp_path / "old.csv"
    old.write_text("kept")
    check_output_paths({"--json": str(new), "--csv": str(old)})
    assert not new.exists() and old.read_text() == "kept"


def test_output_check_survives_another_process_checking_the_same_path(tmp_path, monkeypatch):
    """Under torchrun every process runs the check on the same --json path: another process may
    remove the probe file between this one's creating and removing it. That is not an error (it
    made rank 0 of a two-process `score` run exit with status 2 now and then)."""
    import builtins

    import nlgmetrics.apps.io as io_module

    target = tmp_path / "out.json"

    def open_then_peer_cleans_up(path, *args, **kwargs):
        handle = builtins.open(path, *args, **kwargs)
        Path(path).unlink()  # the other process's own check, finishing first
        return handle

    monkeypatch.setattr(io_module, "open", open_then_peer_cleans_up, raising=False)
    io_module.check_output_paths({"--json": str(target)})
    assert not target.exists()


def test_byte_order_mark_is_stripped(tmp_path):
    """A UTF-8 BOM (Notepad, Excel) is not part of the first text: same scores as without it."""
    from nlgmetrics.apps.io import read_column

    plain = tmp_path / "plain.txt"
    _write_lines(plain, PREDICTIONS)
    marked = tmp_path / "marked.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert read_column(marked) == PREDICTIONS
    jsonl = tmp_path / "marked.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps({"t": t}) + "\r\n" for t in PREDICTIONS).encode())
    assert read_column(jsonl, "t") == PREDICTIONS
    csv_file = tmp_path / "marked.csv"
    csv_file.write_bytes(b"\xef\xbb\xbf" + ("t\n" + "\n".join(PREDICTIONS) + "\n").encode())
    assert read_column(csv_file, "t") == PREDICTIONS


def test_byte_order_mark_gives_the_same_scores(tmp_path):
    out_plain, out_marked = tmp_path / "plain.json", tmp_path / "marked.json"
    preds = _write_lines(tmp_path / "p.txt", PREDICTIONS)
    refs = _write_lines(tmp_path / "r.txt", REFERENCES_A)
    marked = tmp_path / "pm.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "p.txt").read_bytes())
    # a word the BOM would glue itself to: the first prediction starts with "the"
    assert main(["score", "-p", preds, "-r", refs, "-m", "bleu", "--json", str(out_plain), "--quiet", "--no-progress"]) == 0
    assert main(["score", "-p", str(marked), "-r", refs, "-m", "bleu", "--json", str(out_marked), "--quiet",
                 "--no-progress"]) == 0
    plain = json.loads(out_plain.read_text())["metrics"]["bleu"]
    assert plain["scores"] == json.loads(out_marked.read_text())["metrics"]["bleu"]["scores"]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(_TEXT, min_size=1, max_size=6), bom=st.booleans(), ending=st.sampled_from(["\n", "\r\n"]),
       final_newline=st.booleans())
def test_txt_round_trip_property(tmp_path_factory, texts, bom, ending, final_newline):
    """Whatever the line endings, final newline and BOM, a .txt file reads back as the texts written."""
    from nlgmetrics.apps.io import read_column

    if texts[0].startswith("\ufeff"):
        texts[0] = texts[0].lstrip("\ufeff")  # a leading U+FEFF *is* a byte-order mark
    body = ending.join(texts)
    if final_newline or texts[-1] == "":
        body += ending  # without it, a last empty text cannot be written
    path = tmp_path_factory.mktemp("txt") / "t.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8"))
    assert read_column(path) == texts


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(max_value=0))
def test_non_positive_limit_is_refused_property(tmp_path_factory, capsys, limit):
    folder = tmp_path_factory.mktemp("limit")
    preds = _write_lines(folder / "p.txt", PREDICTIONS)
    assert main(["score", "-p", preds, "-r", preds, "-m", "bleu", "--limit", str(limit)]) == 2
    assert "--limit: expected a positive integer" in _one_line_error(capsys)


@settings(max_examples=20, deadline=None)
@given(limit=st.integers(min_value=1, max_value=5))
def test_positive_limit_scores_the_first_examples_property(tmp_path_factory, limit):
    from nlgmetrics.bleu import bleu

    folder = tmp_path_factory.mktemp("limit")
    preds = _write_lines(folder / "p.txt", PREDICTIONS)
    refs = _write_lines(folder / "r.txt", REFERENCES_A)
    out = folder / "o.json"
    assert main(["score", "-p", preds, "-r", refs, "-m", "bleu", "--limit", str(limit), "--json", str(out),
                 "--quiet", "--no-progress"]) == 0
    got = json.loads(out.read_text())
    assert got["num_examples"] == min(limit, 3)
    assert got["metrics"]["bleu"]["scores"] == bleu(PREDICTIONS[:limit], REFERENCES_A[:limit]).scores


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
        [sys.executable, "-m", "nlgmetrics.apps.cli", "score", "-p", preds, "-r", refs, "-m", "bleu", "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    from nlgmetrics.bleu import bleu

    assert bleu(PREDICTIONS, REFERENCES_A).signature in done.stdout


def test_top_level_help_does_not_import_torch():
    """`nlgmetrics --help` stays fast: the metric modules (and torch) load only when needed."""
    code = (
        "import sys\n"
        "from nlgmetrics.apps.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "torch not loaded" in done.stdout and "score" in done.stdout


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


def test_option_values_follow_the_library_signature():
    """``none`` is accepted where the library takes None (FFLM's max_length: the model's context),
    refused where it does not; a digit string is a token id."""
    from nlgmetrics.apps.cli import collect_options

    assert collect_options(["fflm"], [], ["fflm.max_length=none", "fflm.start_token=0"], None) == {
        "fflm": {"max_length": None, "start_token": 0}}
    assert collect_options(["shannon_score"], [], ["shannon_score.start_token=<|endoftext|>"], None) == {
        "shannon_score": {"start_token": "<|endoftext|>"}}
    with pytest.raises(ValueError, match=r"max_ngram_order='none': expected a number"):
        collect_options(["bleu"], [], ["bleu.max_ngram_order=none"], None)


def test_token_budget_auto_reaches_every_lm_metric_from_the_command_line():
    """``--option <lm>.token_budget=auto`` is the library's ``token_budget="auto"``; other words still fail."""
    from nlgmetrics.apps.cli import collect_options

    for metric in ("fflm", "shannon_score", "infolm", "blanc"):
        assert collect_options([metric], [], [f"{metric}.token_budget=auto"], None) == {metric: {"token_budget": "auto"}}
        assert collect_options([metric], [], [f"{metric}.token_budget=4096"], None) == {metric: {"token_budget": 4096}}
    with pytest.raises(ValueError, match=r"token_budget='max': expected a number"):
        collect_options(["fflm"], [], ["fflm.token_budget=max"], None)


def _listing_of(metric: str, listing: str) -> str:
    """The lines `nlgmetrics metrics` prints for ``metric`` (its header and option lines)."""
    lines = listing.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {metric}:"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("      ")), len(lines))
    return "\n".join(lines[start:end])


def test_metrics_lists_infolm_model_kind_and_rouge_aggregation(capsys):
    assert main(["metrics"]) == 0
    listing = capsys.readouterr().out
    infolm = _listing_of("infolm", listing)
    assert "      model_kind (str, default None): choices: masked, causal;" in infolm, infolm
    rouge = _listing_of("rouge_family", listing)
    assert "      aggregation (str, default bootstrap): choices: bootstrap, rouge155;" in rouge, rouge


def test_infolm_model_kind_reaches_the_library(tmp_path, capsys, tiny_gpt2_dir):
    from nlgmetrics.infolm import infolm

    preds = _write_lines(tmp_path / "preds.txt", PREDICTIONS)
    refs = _write_lines(tmp_path / "refs.txt", REFERENCES_A)
    out_json = tmp_path / "out.json"
    argv = ["score", "-p", preds, "-r", refs, "-m", "infolm", "--model", f"infolm={tiny_gpt2_dir}",
            "--device", "cpu", "--json", str(out_json), "--quiet", "--no-progress"]
    assert main([*argv, "--option", "infolm.model_kind=causal"]) == 0
    want = infolm(PREDICTIONS, REFERENCES_A, model=str(tiny_gpt2_dir), device="cpu", model_kind="causal")
    got = json.loads(out_json.read_text())["metrics"]["infolm"]
    assert got["scores"]["infolm"] == want.scores["infolm"] and got["signature"] == want.signature
    assert "|kind:causal|" in got["signature"]
    # the value reaches the library, which refuses a masked pass through a causal model
    assert main([*argv, "--option", "infolm.model_kind=masked"]) == 2
    error = capsys.readouterr().err.splitlines()[-1]  # after transformers' own loading bar
    assert error.startswith("nlgmetrics score: error:") and "needs a masked LM" in error


def test_rouge155_aggregation_from_the_command_line_is_the_librarys(tmp_path):
    from nlgmetrics.rouge import rouge_family

    preds = _write_lines(tmp_path / "preds.txt", PREDICTIONS)
    refs_a = _write_lines(tmp_path / "refs_a.txt", REFERENCES_A)
    refs_b = _write_lines(tmp_path / "refs_b.txt", REFERENCES_B)
    out_json = tmp_path / "out.json"
    assert main(["score", "-p", preds, "-r", refs_a, "-r", refs_b, "-m", "rouge_family",
                 "--option", "rouge_family.aggregation=rouge155", "--option", "rouge_family.multi_ref=average",
                 "--json", str(out_json), "--quiet", "--no-progress"]) == 0
    references = [[a, b] for a, b in zip(REFERENCES_A, REFERENCES_B)]
    want = rouge_family(PREDICTIONS, references, aggregation="rouge155", multi_ref="average")
    got = json.loads(out_json.read_text())["metrics"]["rouge_family"]
    assert got["aggregate"] == json.loads(json.dumps(want.aggregate())) and got["signature"] == want.signature
    assert "|aggregation:rouge155|" in got["signature"]
    bootstrap = rouge_family(PREDICTIONS, references, multi_ref="average").aggregate()
    assert got["aggregate"] != json.loads(json.dumps(bootstrap))  # ROUGE-1.5.5's averages, not the plain mean
