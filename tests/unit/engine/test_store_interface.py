"""The store's interface outside the library functions: the shared ``cache_dir`` option, the
evaluate modules and ``nlgmetrics score --cache-dir``, ``nlgmetrics cache info|clear``, and the
Trainer helper. Every check reads the store's sqlite file directly as its oracle (entries,
bytes, namespaces) or counts the store's lookups, never the code under test's own report.

The library functions' store (keys, damaged entries, concurrency) is tested in tests/unit/engine/test_store.py.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlgmetrics.apps.cli import collect_options, main
from nlgmetrics.engine.store import STORE_FILE, Store
from nlgmetrics.registry import get_protocol, metric_names
from tests.support.harness import PREDICTIONS, REPO_ROOT, model_fixture, module_folder, second_input, write_cli_inputs

LM_METRICS = [name for name in metric_names() if get_protocol(name).uses_model]


@pytest.fixture(autouse=True)
def _no_store_from_the_environment(monkeypatch):
    """"Without a store" must mean without one: a developer's $NLGMETRICS_CACHE_DIR is ignored."""
    monkeypatch.delenv("NLGMETRICS_CACHE_DIR", raising=False)
    monkeypatch.delenv("NLGMETRICS_CACHE_MAX_BYTES", raising=False)


class Lookups:
    """Counts what every :class:`~nlgmetrics.engine.store.Store` looked up and found (all stores
    opened during the test: each library call opens its own)."""

    def __init__(self) -> None:
        self.asked = self.found = 0

    def reset(self) -> None:
        self.asked = self.found = 0


@pytest.fixture
def lookups(monkeypatch) -> Iterator[Lookups]:
    counts = Lookups()
    original = Store.get

    def counted(self: Store, namespace: str, queries: Any, **options: Any) -> Any:
        found = original(self, namespace, queries, **options)
        counts.asked += len(set(queries))
        counts.found += len(found)
        return found

    monkeypatch.setattr(Store, "get", counted)
    yield counts


@contextmanager
def _db(directory: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the store's database (for SELECTs only), closed on exit: as the last one,
    sqlite then folds its log back and deletes it, as the commands' own connections do, so that
    the oracle leaves the files' sizes as the commands report them."""
    with closing(sqlite3.connect(directory / STORE_FILE)) as db:
        yield db


def _entries(directory: Path) -> int:
    with _db(directory) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def _per_namespace(directory: Path) -> dict[str, tuple[int, int, str]]:
    """namespace (its first 12 digits, as reported) -> (entries, bytes, description), from sqlite."""
    with _db(directory) as db:
        described = dict(db.execute("SELECT namespace, description FROM namespaces").fetchall())
        rows = db.execute("SELECT namespace, COUNT(*), SUM(size) FROM entries GROUP BY namespace").fetchall()
    return {space[:12]: (n, size, described.get(space, "")) for space, n, size in rows}


def _store_files(directory: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in directory.glob(f"{STORE_FILE}*")}


def _model(name: str, request) -> str:
    return str(request.getfixturevalue(model_fixture(name)))


def _close(a: Any, b: Any, where: str = "") -> None:
    """Equal within the engine's batch invariance in float32 (the cards: within 1e-5): a store
    may change which queries share a forward pass, never what a query computes."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, str):
        assert a == b, where
    else:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=where)


# ------------------------------------------------------------------------------------------------
# the shared option


@pytest.mark.parametrize("name", LM_METRICS)
def test_cache_dir_is_a_shared_model_option_that_writes_no_signature_key(name):
    protocol = get_protocol(name)
    option = protocol.option("cache_dir")
    assert "cache_dir" in protocol.accepted_options()
    assert option.signature_key is None  # it never changes a number
    assert option.default is None and option.nullable  # None: $NLGMETRICS_CACHE_DIR, else no store
    assert not option.offered  # --cache-dir, not --option; no demo widget
    assert option.parse("runs/store") == "runs/store" and option.parse("none") is None


def test_no_metric_without_a_model_takes_cache_dir():
    for name in metric_names():
        protocol = get_protocol(name)
        if not protocol.uses_model:
            assert "cache_dir" not in {option.name for option in protocol.options}, name


# ------------------------------------------------------------------------------------------------
# evaluate modules


def _load_module(name: str, scratch: Path):
    import evaluate

    here = os.getcwd()
    os.chdir(REPO_ROOT)  # a module imports nlgmetrics as installed; load it as the other tests do
    try:
        return evaluate.load(str(module_folder(name, scratch)))
    finally:
        os.chdir(here)


@pytest.mark.parametrize("name", LM_METRICS)
def test_module_compute_with_cache_dir_equals_without_and_fills_the_store(name, request, tmp_path, lookups):
    module = _load_module(name, tmp_path / "modules")
    second, others = second_input(name)
    inputs = {"predictions": PREDICTIONS, second: others, "model": _model(name, request), "device": "cpu",
              "progress": False, "use_aggregator": False, "return_signature": True}
    store = tmp_path / "store"
    plain = module.compute(**inputs)
    assert not store.exists() and lookups.asked == 0  # no store unless asked for

    first = module.compute(**inputs, cache_dir=str(store))
    stored = _entries(store)
    assert stored > 0 and lookups.found == 0  # a cold store: every query computed, then kept
    _close(first, plain, name)  # the signature (a string) exactly: cache_dir writes none

    lookups.reset()
    again = module.compute(**inputs, cache_dir=str(store))
    assert again == first  # bit for bit what was stored
    assert lookups.asked > 0 and lookups.found == lookups.asked  # every query read back
    assert _entries(store) == stored


# ------------------------------------------------------------------------------------------------
# nlgmetrics score --cache-dir


def _score(name: str, folder: Path, model: str, *extra: str) -> dict:
    out = folder / "scores.json"
    argv = ["score", *write_cli_inputs(name, folder), "-m", name, "--model", f"{name}={model}", "--device", "cpu",
            "--json", str(out), "--quiet", "--no-progress", *extra]
    assert main(argv) == 0
    return json.loads(out.read_text(encoding="utf-8"))["metrics"][name]


@pytest.mark.parametrize("name", LM_METRICS)
def test_cli_cache_dir_equals_without_and_fills_the_store(name, request, tmp_path, lookups):
    model, store = _model(name, request), tmp_path / "store"
    plain = _score(name, tmp_path, model)
    first = _score(name, tmp_path, model, "--cache-dir", str(store))
    stored = _entries(store)
    assert stored > 0 and lookups.found == 0
    _close(first, plain, name)

    lookups.reset()
    again = _score(name, tmp_path, model, "--cache-dir", str(store))
    assert again == first
    assert lookups.asked > 0 and lookups.found == lookups.asked
    assert _entries(store) == stored


def test_cli_cache_dir_goes_to_every_lm_metric_and_a_metrics_own_option_wins():
    options = collect_options(["bleu", "infolm", "fflm"], [], ["fflm.cache_dir=/runs/fflm"], None, "/runs/all")
    assert options == {"infolm": {"cache_dir": "/runs/all"}, "fflm": {"cache_dir": "/runs/fflm"}}
    assert collect_options(["bleu"], [], [], None, "/runs/all") == {}  # no model, nothing to store
    assert collect_options(["infolm"], [], ["infolm.cache_dir=none"], None, None) == {"infolm": {"cache_dir": None}}


# ------------------------------------------------------------------------------------------------
# nlgmetrics cache info | clear


@pytest.fixture
def filled_store(tmp_path, tiny_gpt2_dir, tiny_bert_dir) -> Path:
    """A store holding the work of two metrics on two models (several namespaces)."""
    from nlgmetrics.infolm import infolm
    from nlgmetrics.shannon import shannon_score

    store = tmp_path / "store"
    shannon_score(["A cat sat.", "Jack bought milk."], ["The cat sat on a mat. It slept.", "Jack went out."],
                  model=str(tiny_gpt2_dir), progress=False, cache_dir=store)
    infolm(["a cat sat", "jack bought milk"], ["the cat sat on a mat", "jack went out"],
           model=str(tiny_bert_dir), progress=False, cache_dir=store)
    # The calls leave their connections to the garbage collector; collected at some later moment,
    # the last one folds sqlite's log into the database and deletes it, changing the files' sizes
    # under a test that measures them. Collected now, the sizes stay put.
    gc.collect()
    return store


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cache_info_reports_what_sqlite_holds(filled_store, capsys, monkeypatch, tiny_gpt2_dir, tiny_bert_dir):
    status, _, err = _cli(capsys, "cache", "set-max-bytes", "5e9", str(filled_store))
    assert status == 0 and err == ""
    with _db(filled_store) as db:  # the cap is kept with the store
        assert db.execute("SELECT value FROM settings WHERE name = 'max_bytes'").fetchone() == (5_000_000_000,)
    spaces = _per_namespace(filled_store)
    assert len(spaces) >= 2  # the test can fail: two models, two namespaces at least
    total_entries = sum(n for n, _, _ in spaces.values())
    total_bytes = sum(size for _, size, _ in spaces.values())

    status, out, err = _cli(capsys, "cache", "info", str(filled_store), "--json")
    files = _store_files(filled_store)
    assert status == 0 and err == ""
    info = json.loads(out)
    assert info["entries"] == total_entries == _entries(filled_store)
    assert info["bytes"] == total_bytes
    assert info["max_bytes"] == 5_000_000_000
    assert info["store"] == str(filled_store / STORE_FILE)
    assert info["file_bytes"] == sum(files.values()) > 0
    assert {s["namespace"]: (s["entries"], s["bytes"], s["describes"]) for s in info["namespaces"]} == spaces
    assert [s["bytes"] for s in info["namespaces"]] == sorted((s["bytes"] for s in info["namespaces"]), reverse=True)
    described = " ".join(s["describes"] for s in info["namespaces"])
    assert str(tiny_gpt2_dir) in described and str(tiny_bert_dir) in described and "float32" in described

    status, out, err = _cli(capsys, "cache", "info", str(filled_store))
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert f"entries: {total_entries:,}" in lines
    assert any(line.startswith(f"bytes: {total_bytes:,} bytes") for line in lines), lines
    assert any(line.startswith("cap: 5,000,000,000 bytes (5 GB)") for line in lines), lines
    namespace_lines = [line for line in lines if line.startswith("  ")]
    assert len(namespace_lines) == len(spaces)
    for space, (n, size, description) in spaces.items():
        assert f"  {space}  entries {n:,}  bytes {size:,}  {description}" in namespace_lines


def test_cache_info_reads_the_folder_from_the_environment(filled_store, capsys, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_DIR", str(filled_store))
    status, out, _ = _cli(capsys, "cache", "info", "--json")
    assert status == 0 and json.loads(out)["entries"] == _entries(filled_store)


def test_cache_info_of_a_folder_without_a_store_says_so_and_creates_none(tmp_path, capsys):
    status, out, err = _cli(capsys, "cache", "info", str(tmp_path))
    assert status == 0 and err == "" and out.startswith(f"no store in {tmp_path}")
    status, out, _ = _cli(capsys, "cache", "info", str(tmp_path / "missing"), "--json")
    assert status == 0 and json.loads(out)["store"] is None and json.loads(out)["entries"] == 0
    assert list(tmp_path.iterdir()) == []


def test_cache_clear_empties_the_store_and_reports_the_bytes_freed(filled_store, capsys):
    """The file stays (a running job goes on writing into it); its entries go, and the bytes freed
    are what the files shrank by."""
    other = filled_store / "notes.txt"  # the folder may hold other files: they stay
    other.write_text("keep me", encoding="utf-8")
    files = _store_files(filled_store)
    assert STORE_FILE in files and _entries(filled_store) > 0
    status, out, err = _cli(capsys, "cache", "clear", str(filled_store), "--json")
    after = _store_files(filled_store)
    assert status == 0 and err == ""
    freed = sum(files.values()) - sum(after.values())
    assert json.loads(out) == {"directory": str(filled_store), "cleared": True, "bytes_freed": freed} and freed > 0
    assert STORE_FILE in after and _entries(filled_store) == 0 and other.read_text(encoding="utf-8") == "keep me"

    status, out, _ = _cli(capsys, "cache", "info", "--json", str(filled_store))
    assert status == 0 and json.loads(out)["entries"] == 0 and json.loads(out)["namespaces"] == []


def test_cache_clear_prints_the_bytes_freed(filled_store, capsys):
    before = sum(_store_files(filled_store).values())
    status, out, _ = _cli(capsys, "cache", "clear", str(filled_store))
    freed = before - sum(_store_files(filled_store).values())
    assert status == 0 and out.strip().startswith(f"cleared the store in {filled_store}: {freed:,} bytes")


@pytest.mark.parametrize("argv", [["cache", "info"], ["cache", "clear"], ["cache", "clear", "--json"]])
def test_a_cache_command_without_a_folder_is_one_line_and_exit_2(argv, capsys):
    status, out, err = _cli(capsys, *argv)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "NLGMETRICS_CACHE_DIR" in err and "DIR" in err


def test_a_cache_command_on_a_file_or_without_an_action_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "file.txt"
    path.write_text("x", encoding="utf-8")
    status, _, err = _cli(capsys, "cache", "clear", str(path))
    assert status == 2 and len(err.strip().splitlines()) == 1 and "not a store folder" in err
    assert path.read_text(encoding="utf-8") == "x"
    status, _, err = _cli(capsys, "cache")
    assert status == 2 and len(err.strip().splitlines()) == 1


def test_cache_info_of_a_file_that_is_not_a_store_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / STORE_FILE).write_bytes(b"this is not a database" * 100)
    status, out, err = _cli(capsys, "cache", "info", str(tmp_path))
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"nlgmetrics cache clear {tmp_path}" in err


# ------------------------------------------------------------------------------------------------
# a bad cache_dir


@pytest.mark.parametrize("name", LM_METRICS)
def test_a_cache_dir_of_another_type_is_refused_naming_it_before_any_model_loads(name):
    from nlgmetrics.core.refusals import OptionError

    second, others = second_input(name)
    # A model that does not exist: loading it first would raise an OSError instead.
    with pytest.raises(ValueError, match=r"`cache_dir` must be a folder path") as caught:
        get_protocol(name).run(PREDICTIONS, others, model="no-such-org/no-such-model", progress=False, cache_dir=5)
    assert isinstance(caught.value, OptionError)


def test_check_cache_dir_accepts_paths_and_refuses_the_rest():
    from nlgmetrics.core.validation import CACHE_DIR_RULE, check_cache_dir

    for good in (None, "", "runs/store", Path("runs")):
        assert check_cache_dir(good) is good
    for bad in (5, True, b"runs", ["runs"]):
        with pytest.raises(ValueError, match=r"`cache_dir` must be a folder path .* got ") as caught:
            check_cache_dir(bad)
        assert caught.value.refusal is CACHE_DIR_RULE


# ------------------------------------------------------------------------------------------------
# the Trainer helper


def _eval_pred(tokenizer, predictions: list[str], references: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(generated ids, label ids) as a Seq2SeqTrainer passes them: padded with -100."""
    def ids(texts: list[str]) -> np.ndarray:
        rows = [tokenizer(text)["input_ids"] for text in texts]
        width = max(map(len, rows))
        return np.array([row + [-100] * (width - len(row)) for row in rows])

    return ids(predictions), ids(references)


REFERENCES = ["the cat sat on the mat all day", "stocks rallied strongly today", "banks struggled badly"]
STEP_1 = ["a cat sat on a mat", "stocks rose today", "banks did badly"]
STEP_2 = ["the cat slept on the mat", "stocks rallied", "the banks struggled"]


def test_trainer_evaluations_read_the_references_from_the_store(tiny_bert_dir, tmp_path, lookups):
    """A Trainer evaluating every N steps scores new generations against the same references: from
    the second evaluation on, the references' work is read from the store, with the numbers an
    evaluation without a store gives."""
    from transformers import AutoTokenizer

    from nlgmetrics.apps.trainer import build_compute_metrics

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    options = {"infolm": {"model": str(tiny_bert_dir), "device": "cpu"}}
    store = tmp_path / "store"
    cached = build_compute_metrics(tokenizer, metrics=["infolm"], metric_options=options, cache_dir=store,
                                   per_example=True)
    plain = build_compute_metrics(tokenizer, metrics=["infolm"], metric_options=options, per_example=True)

    first = cached(_eval_pred(tokenizer, STEP_1, REFERENCES))
    after_first = _entries(store)
    assert after_first > 0 and lookups.found == 0
    _close(first, plain(_eval_pred(tokenizer, STEP_1, REFERENCES)), "step 1")

    lookups.reset()
    second = cached(_eval_pred(tokenizer, STEP_2, REFERENCES))
    # InfoLM keeps one bag of distributions per distinct text: the references' are found, the new
    # generations' computed and added (one entry each).
    assert lookups.found == len(REFERENCES) and lookups.asked == len(REFERENCES) + len(STEP_2)
    assert _entries(store) == after_first + len(STEP_2)
    without = plain(_eval_pred(tokenizer, STEP_2, REFERENCES))
    _close(second, without, "step 2")
    assert second["infolm"] != first["infolm"]  # new generations, a new number: the test can fail


def test_trainer_cache_dir_a_metrics_own_option_wins_and_is_checked_when_built(tiny_bert_dir, tmp_path):
    from transformers import AutoTokenizer

    from nlgmetrics.apps.trainer import build_compute_metrics

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    everyone, own = tmp_path / "everyone", tmp_path / "own"
    options = {"infolm": {"model": str(tiny_bert_dir), "device": "cpu", "cache_dir": str(own)}}
    compute = build_compute_metrics(tokenizer, metrics=["bleu", "infolm"], metric_options=options, cache_dir=everyone)
    compute(_eval_pred(tokenizer, STEP_1, REFERENCES))
    assert _entries(own) > 0 and not everyone.exists()
    assert options["infolm"]["cache_dir"] == str(own)  # the caller's options are not rewritten

    with pytest.raises(ValueError, match=r"`cache_dir` must be a folder path"):
        build_compute_metrics(tokenizer, metrics=["infolm"], metric_options=options, cache_dir=5)
    with pytest.raises(ValueError, match=r"preset='summarization' .* takes none of \['cache_dir'\]"):
        build_compute_metrics(tokenizer, preset="summarization", cache_dir=everyone)


# ------------------------------------------------------------------------------------------------
# what the cards say a store reuses


SUMMARIES = ["Jack bought milk.", "A cat sat on a mat."]
DOCUMENTS = ["Jack drove to the bazaar. He bought milk and honey. Then he went home.",
             "The cat sat on a mat. It slept all day. The dog barked."]
OTHER_SUMMARIES = ["Jack went home.", "The dog barked all day."]


def _reuse_cases() -> list[Any]:
    def infolm_measure(store: Path, model: Path, first: bool):
        from nlgmetrics.infolm import infolm

        measure = "fisher_rao_distance" if first else "kl_divergence"
        return infolm(SUMMARIES, DOCUMENTS, model=str(model), information_measure=measure, progress=False,
                      cache_dir=store)

    def fflm_weights(store: Path, model: Path, first: bool):
        from nlgmetrics.fflm import fflm

        weights = (0.25, 0.25, 0.5) if first else (0.5, 0.2, 0.3)
        return fflm(SUMMARIES, DOCUMENTS, model=str(model), weights=weights, progress=False, cache_dir=store)

    def shannon_other_summaries(store: Path, model: Path, first: bool):
        from nlgmetrics.shannon import shannon_score

        return shannon_score(SUMMARIES if first else OTHER_SUMMARIES, DOCUMENTS, model=str(model), progress=False,
                             cache_dir=store)

    def fflm_other_summaries(store: Path, model: Path, first: bool):
        from nlgmetrics.fflm import fflm

        return fflm(SUMMARIES if first else OTHER_SUMMARIES, DOCUMENTS, model=str(model), progress=False,
                    cache_dir=store)

    # (call, fixture, whether the second call finds everything it looks up)
    return [pytest.param(infolm_measure, "tiny_bert_dir", True, id="infolm-another-measure-reuses-the-bags"),
            pytest.param(fflm_weights, "tiny_gpt2_dir", True, id="fflm-other-weights-reuse-every-pass"),
            pytest.param(shannon_other_summaries, "tiny_gpt2_dir", False, id="shannon-documents-passes-reused"),
            pytest.param(fflm_other_summaries, "tiny_gpt2_dir", False, id="fflm-document-prior-reused")]


@pytest.mark.parametrize(("call", "fixture", "everything"), _reuse_cases())
def test_what_the_cards_say_a_second_call_reads_back(call, fixture, everything, request, tmp_path, lookups):
    model = request.getfixturevalue(fixture)
    call(tmp_path, model, True)
    lookups.reset()
    call(tmp_path, model, False)
    assert lookups.found > 0
    assert (lookups.found == lookups.asked) is everything, (lookups.found, lookups.asked)
