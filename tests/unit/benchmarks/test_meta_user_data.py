"""Meta-evaluation on a user's own table (``--data``): texts as the user wrote them (a number is a
text), missing values and empty reference lists refused by row, keys that are tuples (an id may
hold ``|``), empty files refused in one line, and result files that are strict JSON.

Expected numbers come from rouge-score and scipy on the texts as written here, never from the runner.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from benchmarks.meta.runner import main as meta_main

REPO = Path(__file__).resolve().parents[3]
PROG = "nlgmetrics meta-eval"


def _error_line(stderr: str) -> str:
    """The one error line of the entry point (progress lines may come before it); no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and stderr.rstrip().splitlines()[-1] == errors[0], stderr
    assert errors[0].startswith(f"{PROG}: error: "), errors[0]
    return errors[0]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    """Cells written exactly as given (quoted only where the csv module must)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def _write_lines(path: Path, lines: list[str]) -> Path:
    """JSON Lines written as given, so that a number keeps the literal of the test (``1.0``, ``1e3``)."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _rouge1(prediction: str, references: tuple[str, ...]) -> float:
    from rouge_score import rouge_scorer

    # The runner's "rouge" family: rouge-score's settings with its Porter stemmer.
    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score_multi(list(references), prediction)["rouge1"].fmeasure


def _run(tmp_path: Path, data: Path, *argv: str) -> tuple[int, dict | None]:
    out = tmp_path / "out"
    status = meta_main(["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q",
                        *argv, "--bootstrap", "20", "--out-dir", str(out), "--cache-dir", str(tmp_path / "cache"),
                        "--no-plots", "--tag", "t"])
    path = out / f"{data.stem}_t.json"
    return status, (json.loads(path.read_text()) if status == 0 else None)


def _result(record: dict, metric: str, level: str, method: str) -> dict:
    return next(r for r in record["tables"]["results"]
                if (r["metric"], r["level"], r["method"], r["split"]) == (metric, level, method, "all"))


# ------------------------------------------------------------------------------------------------
# a number in a text column is the text the user wrote

#: (item, sys, q, prediction, reference) as written in the file: every text column holds only
#: numbers, so that csv readers type it as a number column (0.50 would come back as 0.5).
NUMBER_CSV = [
    ("0", "A", "3", "0", "0"), ("0", "B", "1", "7", "0"), ("0", "C", "2", "0.50", "0"),
    ("1", "A", "1", "12", "1.0"), ("1", "B", "3", "1.0", "1.0"), ("1", "C", "2", "0", "1.0"),
    ("2", "A", "2", "007", "7"), ("2", "B", "1", "3", "7"), ("2", "C", "3", "7", "7"),
]
#: The same in JSON Lines: numbers written as JSON numbers, their literals as the expected texts.
NUMBER_JSONL = [
    ("0", "A", "3", "0", "0"), ("0", "B", "1", "7", "0"), ("0", "C", "2", "0.50", "0"),
    ("1", "A", "1", "12", "1.0"), ("1", "B", "3", "1.0", "1.0"), ("1", "C", "2", "0", "1.0"),
    ("2", "A", "2", "1e3", "1000"), ("2", "B", "1", "3", "1000"), ("2", "C", "3", "1000", "1000"),
]


def _number_file(tmp_path: Path, kind: str) -> tuple[Path, list[tuple[str, ...]]]:
    if kind == "csv":
        return _write_csv(tmp_path / "numbers.csv", ["item", "sys", "q", "out", "ref"], [list(r) for r in NUMBER_CSV]), NUMBER_CSV
    lines = [f'{{"item": {d}, "sys": "{s}", "q": {q}, "out": {p}, "ref": [{r}], "src": {p}}}'
             for d, s, q, p, r in NUMBER_JSONL]
    return _write_lines(tmp_path / "numbers.jsonl", lines), NUMBER_JSONL


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_numbers_in_text_columns_are_the_texts_as_written(tmp_path, kind):
    from benchmarks.meta.data import load_table_dataset
    from benchmarks.meta.metrics import FAMILIES

    assert _rouge1("0", ("0",)) == 1.0  # by hand: one token, matched
    path, rows = _number_file(tmp_path, kind)
    source = {"source_key": "src"} if kind == "jsonl" else {}
    examples = load_table_dataset(path, doc_key="item", system_key="sys", human=["q"], prediction_key="out",
                                  reference_key="ref", **source)
    assert [e.prediction for e in examples] == [r[3] for r in rows]
    assert [e.references for e in examples] == [(r[4],) for r in rows]
    if kind == "jsonl":
        assert [e.source for e in examples] == [r[3] for r in rows]
    scores, _ = FAMILIES["rouge"].fn(examples, {})
    assert scores["rouge1"] == pytest.approx([_rouge1(r[3], (r[4],)) for r in rows], abs=1e-12)


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_numbers_in_text_columns_score_end_to_end(tmp_path, capsys, kind):
    """System A's "0" against the reference "0" is a match (ROUGE-1 1.0), not an empty text."""
    path, rows = _number_file(tmp_path, kind)
    status, record = _run(tmp_path, path, "--prediction-key", "out", "--reference-key", "ref", "--metrics", "rouge")
    assert status == 0
    assert "metric constant" not in capsys.readouterr().err
    expected = stats.pearsonr([_rouge1(r[3], (r[4],)) for r in rows], [float(r[2]) for r in rows])[0]
    assert _result(record, "rouge1", "pooled", "pearson")["value"] == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------------------------------------------
# a missing value, an empty reference list: refused by row, in one line

#: Two documents, so that a run without the bad row would go through (the bootstrap needs two).
_GOOD = ['{"item": 0, "sys": "A", "q": 1, "out": "a cat", "ref": ["a cat"], "src": "the cat"}',
         '{"item": 0, "sys": "B", "q": 2, "out": "a dog", "ref": ["a cat"], "src": "the cat"}',
         '{"item": 1, "sys": "A", "q": 2, "out": "a dog", "ref": ["a dog"], "src": "the dog"}',
         '{"item": 1, "sys": "B", "q": 1, "out": "a cow", "ref": ["a dog"], "src": "the dog"}']
_GOOD_CSV = "item,sys,q,out,ref,src\n0,A,1,a cat,a cat,s\n1,A,2,a dog,a dog,s\n1,B,1,a cow,a dog,s\n"


@pytest.mark.parametrize("name, content, message", [
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "out": null, "ref": ["a cat"], "src": "the cat"}'],
     r"j\.jsonl row 5 column 'out': no value \(null or an empty cell\); .*fill it in or remove the row"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "ref": ["a cat"], "src": "the cat"}'],
     r"j\.jsonl row 5 column 'out': no value"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "out": "x", "ref": null, "src": "the cat"}'],
     r"j\.jsonl row 5 column 'ref': no value"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "out": "x", "ref": [], "src": "the cat"}'],
     r"j\.jsonl row 5 column 'ref': an empty list of references; give at least one reference text or remove the row"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "out": "x", "ref": ["a", null], "src": "the cat"}'],
     r"j\.jsonl row 5 column 'ref': reference 2: no value"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": "C", "q": 3, "out": "x", "ref": ["a"], "src": null}'],
     r"j\.jsonl row 5 column 'src': no value"),
    ("j.jsonl", _GOOD + ['{"item": 1, "sys": null, "q": 3, "out": "x", "ref": ["a"], "src": "s"}'],
     r"j\.jsonl row 5 column 'sys': no value"),
    ("j.jsonl", ['{"item": 0, "sys": "A", "q": 1, "out": false, "ref": ["a"], "src": "s"}',
                 '{"item": 0, "sys": "B", "q": 2, "out": true, "ref": ["a"], "src": "s"}',
                 '{"item": 1, "sys": "A", "q": 3, "out": true, "ref": ["a"], "src": "s"}',
                 '{"item": 1, "sys": "B", "q": 1, "out": false, "ref": ["a"], "src": "s"}'],
     r"j\.jsonl row 1 column 'out': a boolean \(false\) is not a text; write the text as a string"),
    ("j.csv", _GOOD_CSV.replace("0,A,1,a cat,a cat,s\n", "0,A,1,a cat,a cat,s\n0,B,2,,a cat,s\n"),
     r"j\.csv row 2 column 'out': an empty cell; a csv cannot tell an empty text from a missing one"),
    ("j.csv", _GOOD_CSV.replace("0,A,1,a cat,a cat,s\n", "0,A,1,a cat,a cat,s\n0,B,2,a dog,,s\n"),
     r"j\.csv row 2 column 'ref': an empty cell"),
])
def test_missing_texts_are_refused_naming_file_row_and_column(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else "".join(line + "\n" for line in content))
    status, _ = _run(tmp_path, path, "--prediction-key", "out", "--reference-key", "ref", "--source-key", "src",
                     "--metrics", "rouge")
    assert status == 2
    assert re.search(message, _error_line(capsys.readouterr().err))


def test_csv_texts_that_look_like_missing_markers_are_texts(tmp_path):
    """pandas reads NA, null, nan and None as missing; the user wrote them as texts."""
    from benchmarks.meta.data import load_table_dataset

    texts = ["NA", "null", "nan", "None", "N/A", " "]
    path = _write_csv(tmp_path / "na.csv", ["item", "sys", "q", "out", "ref"],
                      [["0", s, str(i), t, t] for i, (s, t) in enumerate(zip("ABCDEF", texts))])
    examples = load_table_dataset(path, doc_key="item", system_key="sys", human=["q"], prediction_key="out",
                                  reference_key="ref")
    assert [e.prediction for e in examples] == texts and [e.references for e in examples] == [(t,) for t in texts]


def test_typed_parquet_numbers_are_their_python_texts(tmp_path):
    """A parquet column is typed by its writer: an integer is its digits, a float Python's repr."""
    import datasets

    from benchmarks.meta.data import load_table_dataset

    rows = [{"item": "0", "sys": s, "q": float(i), "out": v, "ref": 0} for i, (s, v) in enumerate(zip("ABC", [0, 7, 12]))]
    rows += [{"item": "1", "sys": s, "q": float(i), "out": v, "ref": 0} for i, (s, v) in enumerate(zip("ABC", [1, 2, 3]))]
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "i.parquet"))
    floats = [{**r, "out": float(r["out"]) / 2, "ref": 1.0} for r in rows]
    datasets.Dataset.from_list(floats).to_parquet(str(tmp_path / "f.parquet"))
    got = load_table_dataset(tmp_path / "i.parquet", doc_key="item", system_key="sys", human=["q"], prediction_key="out",
                             reference_key="ref")
    assert [(e.prediction, e.references) for e in got] == [(str(r["out"]), ("0",)) for r in rows]
    got = load_table_dataset(tmp_path / "f.parquet", doc_key="item", system_key="sys", human=["q"], prediction_key="out",
                             reference_key="ref")
    assert [(e.prediction, e.references) for e in got] == [(repr(r["out"]), ("1.0",)) for r in floats]


def test_the_user_rows_are_not_mutated(tmp_path):
    """The loader reads the file; the file is left as it was."""
    from benchmarks.meta.data import load_table_dataset

    path, _ = _number_file(tmp_path, "jsonl")
    before = path.read_bytes()
    load_table_dataset(path, doc_key="item", system_key="sys", human=["q"], prediction_key="out", reference_key="ref")
    assert path.read_bytes() == before


# ------------------------------------------------------------------------------------------------
# keys are tuples: "x|y" + "A" is not "x" + "y|A"

#: Documents and systems whose "doc|system" joins collide: ("x", "y|A") and ("x|y", "A") both give "x|y|A".
PIPE_DOCS, PIPE_SYSTEMS = ("x", "x|y", "[x"), ("A", "y|A", "B")


def _pipe_rows() -> list[dict]:
    rows = []
    for d, doc in enumerate(PIPE_DOCS):
        for s, system in enumerate(PIPE_SYSTEMS):
            rows.append({"item": doc, "sys": system, "q": float((d * 7 + s * 5) % 9),
                         "mine": float((d * 3 + s * 2) % 7) + 0.5, "out": f"cat {d} {s}", "ref": [f"cat {d} {(s + d) % 3}"]})
    return rows


def test_ids_holding_a_pipe_are_distinct_outputs(tmp_path):
    from benchmarks.meta.data import load_table_dataset

    rows = _pipe_rows()
    path = _write_lines(tmp_path / "p.jsonl", [json.dumps(r) for r in rows])
    examples = load_table_dataset(path, doc_key="item", system_key="sys", human=["q"])
    assert [e.key for e in examples] == [(r["item"], r["sys"]) for r in rows]
    assert ("x", "y|A") in {e.key for e in examples} and ("x|y", "A") in {e.key for e in examples}


def test_duplicate_rows_with_pipes_are_named_by_their_own_rows(tmp_path):
    from benchmarks.meta.data import load_table_dataset

    rows = [{"item": "x|y", "sys": "A", "q": 1}, {"item": "x", "sys": "y|A", "q": 2}, {"item": "x|y", "sys": "A", "q": 3}]
    path = _write_lines(tmp_path / "d.jsonl", [json.dumps(r) for r in rows])
    with pytest.raises(ValueError, match=r"rows 1 and 3 both have item='x\|y', sys='A'"):
        load_table_dataset(path, doc_key="item", system_key="sys", human=["q"])


def test_user_scores_join_ids_holding_a_pipe(tmp_path):
    rows = _pipe_rows()
    data = _write_lines(tmp_path / "p.jsonl", [json.dumps({k: r[k] for k in ("item", "sys", "q")}) for r in rows])
    scores = _write_csv(tmp_path / "s.csv", ["item", "sys", "mine"],
                        [[r["item"], r["sys"], repr(r["mine"])] for r in reversed(rows)])
    status, record = _run(tmp_path, data, "--metrics", "none", "--scores", str(scores))
    assert status == 0
    assert record["score_files"][0]["n_rows"] == len(rows) and record["score_files"][0]["n_examples_without_score"] == 0
    expected = stats.pearsonr([r["mine"] for r in rows], [r["q"] for r in rows])[0]
    assert _result(record, "mine", "pooled", "pearson")["value"] == pytest.approx(expected, abs=1e-12)


def test_cached_and_exported_scores_keep_ids_holding_a_pipe(tmp_path):
    """A rerun reads every score from the cache; the stored file exports to a --scores csv that
    joins every output again, with the same numbers."""
    from benchmarks import stored_scores

    rows = _pipe_rows()
    data = _write_lines(tmp_path / "p.jsonl", [json.dumps(r) for r in rows])
    common = ("--prediction-key", "out", "--reference-key", "ref", "--metrics", "rouge")
    status, first = _run(tmp_path, data, *common)
    assert status == 0 and first["metric_runs"][0]["computed"] == len(rows)
    status, again = _run(tmp_path, data, *common)
    assert status == 0 and again["metric_runs"][0]["computed"] == 0 and again["metric_runs"][0]["from_cache"] == len(rows)
    [stored] = (tmp_path / "cache" / "p").glob("rouge-*.jsonl")
    _, by_key, _ = stored_scores.read_stored(stored)
    assert set(by_key) == {(r["item"], r["sys"]) for r in rows}
    exported = tmp_path / "copy.csv"
    assert stored_scores.write_scores_csv(stored, "p", "_copy", exported)["rows"] == len(rows)
    out = tmp_path / "out2"
    # The export names its key columns doc, system: a table with those column names joins it.
    renamed = _write_lines(tmp_path / "r.jsonl", [json.dumps({"doc": r["item"], "system": r["sys"], "q": r["q"]})
                                                  for r in rows])
    assert meta_main(["--data", str(renamed), "--doc-key", "doc", "--system-key", "system", "--human", "q",
                      "--metrics", "none", "--scores", str(exported), "--bootstrap", "20", "--out-dir", str(out),
                      "--no-plots", "--tag", "t"]) == 0
    copy = json.loads((out / "r_t.json").read_text())
    want = stats.pearsonr([_rouge1(r["out"], tuple(r["ref"])) for r in rows], [r["q"] for r in rows])[0]
    assert _result(copy, "rouge1_copy", "pooled", "pearson")["value"] == pytest.approx(want, abs=1e-9)
    assert _result(first, "rouge1", "pooled", "pearson")["value"] == pytest.approx(want, abs=1e-12)


def test_committed_score_files_still_load_with_tuple_keys():
    """The committed scores keep their "doc|system#hash" keys on disk: each reads back as a tuple."""
    from benchmarks import stored_scores

    path = next((REPO / "benchmarks" / "results" / "scores" / "realsumm").glob("rouge-*.jsonl"))
    _, by_key, _ = stored_scores.read_stored(path)
    assert by_key and all(isinstance(k, tuple) and len(k) == 2 and k[0].isdigit() for k in by_key)
    first_line = json.loads(path.read_text().splitlines()[1])
    text = next(iter(first_line["scores"]))
    doc, system = text.rsplit("#", 1)[0].split("|", 1)
    assert (doc, system) in by_key
    assert stored_scores.key_parts("realsumm", (doc, system)) == (doc, *system.split(":", 1))


#: Ids: short texts over letters, digits, "|", "[", '"', "#", "," and a space (what joins or encodings
#: could confuse).
_ID = st.text(alphabet="ab0|[\"#, ", min_size=1, max_size=5)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(_ID, _ID), min_size=2, max_size=6, unique=True))
def test_key_texts_are_one_to_one_and_read_back(keys):
    from benchmarks.meta.data import key_text, parse_key_text

    texts = [key_text(k) for k in keys]
    assert len(set(texts)) == len(keys)
    assert [parse_key_text(t) for t in texts] == keys
    # The "#hash" the cache appends is cut at the last "#": the key reads back whole.
    assert [parse_key_text((t + "#0123abcd").rsplit("#", 1)[0]) for t in texts] == keys


def test_key_texts_of_plain_ids_are_the_stored_form():
    """Ids without "|" keep the form the committed score files hold."""
    from benchmarks.meta.data import key_text

    assert key_text(("12", "abs:bart_out")) == "12|abs:bart_out"
    assert key_text(("x|y", "A")) != key_text(("x", "y|A"))


# ------------------------------------------------------------------------------------------------
# texts and ids as generated: numeric-looking texts, ids with "|", in csv and JSON Lines

#: JSON number literals (written as numbers in JSON Lines, as cells in csv) and, for csv only, "007".
_JSON_NUMBERS = ["0", "1.0", "1", "-0", "0.50", "1e3", "12", "3.14159", "-2"]
_NUMERIC = st.sampled_from(_JSON_NUMBERS + ["007"])
_WORDS = st.text(alphabet=string.ascii_lowercase + " .,'|", min_size=1, max_size=12).filter(lambda t: t.strip())
_TEXT = st.one_of(_NUMERIC, _WORDS)
# Ids with "|" and ids a number-typing reader would merge ("007" and "7", "1.10" and "1.1").
_DOC_ID = st.one_of(st.text(alphabet="xy|", min_size=1, max_size=4), st.sampled_from(_JSON_NUMBERS + ["007", "7", "1.10", "1.1"]))


@st.composite
def user_tables(draw):
    docs = draw(st.lists(_DOC_ID, min_size=1, max_size=3, unique=True))
    systems = draw(st.lists(_DOC_ID, min_size=1, max_size=3, unique=True))
    kind = draw(st.sampled_from(["csv", "jsonl"]))
    numeric_only = draw(st.booleans())  # a column of numbers only: the readers type it as a number column
    text = (st.sampled_from(_JSON_NUMBERS) if kind == "jsonl" else _NUMERIC) if numeric_only else _TEXT
    as_numbers = numeric_only or draw(st.booleans())  # JSON: number literals as numbers, beside strings
    rows = []
    for d in docs:
        for s in systems:
            rows.append({"item": d, "sys": s, "q": draw(st.integers(0, 9)), "out": draw(text), "ref": draw(text)})
    return rows, as_numbers, kind


def _json_value(text: str, as_number: bool) -> str:
    """A text as JSON: its own literal where it is a JSON number and the test writes numbers."""
    try:
        number = isinstance(json.loads(text), (int, float))
    except ValueError:
        number = False
    return text if as_number and number else json.dumps(text)


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(user_tables())
def test_generated_tables_load_texts_and_keys_as_written(tmp_path_factory, table):
    from benchmarks.meta.data import load_table_dataset

    rows, as_numbers, kind = table
    folder = tmp_path_factory.mktemp("gen")
    if kind == "csv":
        path = _write_csv(folder / "g.csv", ["item", "sys", "q", "out", "ref"],
                          [[r["item"], r["sys"], str(r["q"]), r["out"], r["ref"]] for r in rows])
    else:
        path = _write_lines(folder / "g.jsonl", [
            f'{{"item": {json.dumps(r["item"])}, "sys": {json.dumps(r["sys"])}, "q": {r["q"]}, '
            f'"out": {_json_value(r["out"], as_numbers)}, "ref": [{_json_value(r["ref"], as_numbers)}]}}'
            for r in rows])
    examples = load_table_dataset(path, doc_key="item", system_key="sys", human=["q"], prediction_key="out",
                                  reference_key="ref")
    assert [e.key for e in examples] == [(r["item"], r["sys"]) for r in rows]
    assert [e.prediction for e in examples] == [r["out"] for r in rows]
    assert [e.references for e in examples] == [(r["ref"],) for r in rows]
    assert [e.human["q"] for e in examples] == [float(r["q"]) for r in rows]


# ------------------------------------------------------------------------------------------------
# empty files: one line, status 2


@pytest.mark.parametrize("name, content", [
    ("e.jsonl", ""), ("e.jsonl", "\n\n"), ("e.json", ""), ("e.json", "[]"), ("e.csv", ""), ("e.csv", "item,sys,q\n"),
    ("e.tsv", ""),
])
def test_empty_data_files_are_refused_in_one_line(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_text(content)
    status, _ = _run(tmp_path, path, "--metrics", "none", "--scores", str(path))
    assert status == 2
    assert re.search(re.escape(name) + r": no rows \(", _error_line(capsys.readouterr().err))


def test_an_empty_scores_file_is_refused_in_one_line(tmp_path, capsys):
    data = _write_lines(tmp_path / "p.jsonl", [json.dumps({k: r[k] for k in ("item", "sys", "q")}) for r in _pipe_rows()])
    empty = tmp_path / "s.jsonl"
    empty.write_text("")
    status, _ = _run(tmp_path, data, "--metrics", "none", "--scores", str(empty))
    assert status == 2
    assert "s.jsonl: no rows" in _error_line(capsys.readouterr().err)


# ------------------------------------------------------------------------------------------------
# results are strict JSON: an undefined correlation is null beside its reason


def _strict(text: str):
    def refuse(constant: str):
        raise AssertionError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_undefined_correlations_are_null_beside_their_reason(tmp_path):
    rows = [{"item": d, "sys": s, "q": float(d + s), "flat": 1.0} for d in range(4) for s in range(3)]
    data = _write_lines(tmp_path / "u.jsonl", [json.dumps(r) for r in rows])
    scores = _write_csv(tmp_path / "s.csv", ["item", "sys", "m"], [[str(r["item"]), str(r["sys"]), str(r["q"] * 2 % 5)]
                                                                    for r in rows])
    out = tmp_path / "out"
    assert meta_main(["--data", str(data), "--doc-key", "item", "--system-key", "sys", "--human", "q,flat",
                      "--metrics", "none", "--scores", str(scores), "--bootstrap", "20", "--out-dir", str(out),
                      "--no-plots", "--tag", "t"]) == 0
    record = _strict((out / "u_t.json").read_text())
    flat = [r for r in record["tables"]["results"] if r["human"] == "flat"]
    assert flat and all(r["value"] is None and r["low"] is None and r["high"] is None for r in flat)
    assert all(r["reason"].startswith("human scores constant") for r in flat)
    defined = [r for r in record["tables"]["results"] if r["human"] == "q" and r["level"] == "pooled"]
    assert defined and all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in defined)


# ------------------------------------------------------------------------------------------------
# ids are texts as written: a reader that types the column must not merge "007" and "7"

#: Pairs of ids that a number-typing reader renders alike, each written once in the table.
_ALIKE_IDS = [("007", "7"), ("1.1", "1.10"), ("0.50", "0.5"), ("1e3", "1000")]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
@pytest.mark.parametrize("first, second", _ALIKE_IDS)
def test_csv_ids_that_read_alike_as_numbers_stay_apart(tmp_path, suffix, first, second):
    """Oracle: the ids as written in the file, and the JSON Lines form of the same table."""
    from benchmarks.meta.data import load_table_dataset

    rows = [[first, "A", "1", "x", "y"], [second, "A", "2", "x", "y"], [first, "B", "3", "x", "y"],
            [second, "B", "4", "x", "y"]]
    path = tmp_path / f"ids{suffix}"
    path.write_text("".join((("\t" if suffix == ".tsv" else ",").join(r) + "\n")
                            for r in [["item", "sys", "q", "out", "ref"], *rows]), encoding="utf-8")
    jsonl = _write_lines(tmp_path / "ids.jsonl", [json.dumps({"item": r[0], "sys": r[1], "q": int(r[2]), "out": r[3],
                                                              "ref": [r[4]]}) for r in rows])
    options = dict(doc_key="item", system_key="sys", human=["q"], prediction_key="out", reference_key="ref")
    keys = [e.key for e in load_table_dataset(path, **options)]
    assert keys == [(r[0], r[1]) for r in rows]
    assert keys == [e.key for e in load_table_dataset(jsonl, **options)]


def test_a_repeated_csv_row_is_named_as_written(tmp_path):
    from benchmarks.meta.data import load_table_dataset

    path = _write_csv(tmp_path / "dup.csv", ["item", "sys", "q"], [["007", "A", "1"], ["7", "A", "2"], ["007", "A", "3"]])
    with pytest.raises(ValueError, match=r"rows 1 and 3 both have item='007', sys='A'"):
        load_table_dataset(path, doc_key="item", system_key="sys", human=["q"])


def test_scores_files_join_ids_as_written(tmp_path):
    from benchmarks.meta.data import Example
    from benchmarks.meta.user_scores import read_scores_file

    examples = [Example((d, "A"), d, "A", "all", "", (), "", {}) for d in ("007", "7")]
    path = _write_csv(tmp_path / "s.csv", ["item", "sys", "mine"], [["7", "A", "0.25"], ["007", "A", "0.75"]])
    scores, _ = read_scores_file(path, "data", ("item", "sys"), examples)
    assert scores == {"mine": [0.75, 0.25]}
    missing = _write_csv(tmp_path / "m.csv", ["item", "sys", "mine"], [["", "A", "0.25"]])
    with pytest.raises(ValueError, match=r"m.csv row 1 column 'item': no value"):
        read_scores_file(missing, "data", ("item", "sys"), examples)
