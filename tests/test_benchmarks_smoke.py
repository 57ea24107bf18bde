"""Smoke tests: each benchmark runs end to end on a tiny slice (tiny random models for LM metrics).

Numbers are checked against an independent computation (sacrebleu + scipy), not against the runner.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from nlgmetrics.meta.runner import main as meta_main

REPO = Path(__file__).resolve().parent.parent


def _run(tmp_path, *extra):
    out, cache = tmp_path / "out", tmp_path / "cache"
    status = meta_main([*extra, "--bootstrap", "30", "--out-dir", str(out), "--cache-dir", str(cache)])
    assert status == 0
    return out, cache


def test_webnlg_bleu_system_level_matches_sacrebleu_and_scipy(tmp_path, shared_data_dir):
    import sacrebleu

    out, cache = _run(tmp_path, "--datasets", "webnlg2020", "--metrics", "bleu,sacrebleu", "--max-docs", "4",
                      "--data-dir", str(shared_data_dir), "--tag", "t", "--no-plots")
    record = json.loads((out / "webnlg2020_t.json").read_text())
    rows = [json.loads(line) for line in (shared_data_dir / "webnlg2020" / "humeval_en.jsonl").open()]
    keep = sorted({r["sample_id"] for r in rows})[:4]
    by_system: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        if r["sample_id"] not in keep:
            continue
        refs = list(r["references"])
        if r["prediction_is_reference"]:
            refs.remove(r["prediction"])  # the pseudo-system must not see its own text
        if not refs:
            continue
        bleu = sacrebleu.sentence_bleu(r["prediction"], refs).score
        by_system.setdefault(r["system"], []).append((bleu, r["Correctness"]))
    systems = sorted(by_system)
    metric = [np.mean([b for b, _ in by_system[s]]) for s in systems]
    human = [np.mean([h for _, h in by_system[s]]) for s in systems]
    expected = stats.pearsonr(metric, human)[0]
    got = next(
        r for r in record["tables"]["results"]
        if r["metric"] == "bleu" and r["level"] == "system" and r["method"] == "pearson" and r["human"] == "Correctness"
    )
    assert got["value"] == pytest.approx(expected, abs=1e-9)
    assert got["low"] <= got["value"] <= got["high"]
    assert "WebNLG-2020-reference" in {s for s in systems}
    # A rerun reads every score from the cache (no recomputation).
    before = {p: p.stat().st_size for p in cache.rglob("*.jsonl")}
    _run(tmp_path, "--datasets", "webnlg2020", "--metrics", "bleu,sacrebleu", "--max-docs", "4",
         "--data-dir", str(shared_data_dir), "--tag", "t", "--no-plots")
    assert {p: p.stat().st_size for p in cache.rglob("*.jsonl")} == before


def test_realsumm_text_metrics_with_plots(tmp_path, shared_data_dir):
    out, _ = _run(tmp_path, "--datasets", "realsumm", "--metrics", "rouge", "--max-docs", "3",
                  "--data-dir", str(shared_data_dir), "--tag", "t")
    md = (out / "realsumm_t.md").read_text()
    for split in ("abs", "ext", "all"):
        assert f"### {split} · litepyramid_recall · text level" in md
        assert f"### {split} · litepyramid_recall · system level" in md
    assert "Command: `python benchmarks/meta_eval.py" in md
    assert (out / "realsumm_t_distributions.png").stat().st_size > 1000


def test_lm_metrics_on_tiny_models(tmp_path, shared_data_dir, tiny_gpt2_dir, tiny_bert_dir):
    out, _ = _run(
        tmp_path, "--datasets", "webnlg2020", "--metrics", "bleu,infolm,shannon,fflm,blanc", "--max-docs", "2",
        "--data-dir", str(shared_data_dir), "--tag", "lm",
        "--infolm-model", str(tiny_bert_dir), "--infolm-measures", "fisher_rao_distance",
        "--shannon-model", str(tiny_gpt2_dir), "--fflm-model", str(tiny_gpt2_dir), "--blanc-model", str(tiny_bert_dir),
        "--temperatures", "0.5,2",
    )
    record = json.loads((out / "webnlg2020_lm.json").read_text())
    assert record["skipped"] == {}, record["skipped"]
    metrics = {r["metric"] for r in record["tables"]["results"]}
    assert {"infolm_fisher_rao_distance", "shannon_score", "fflm", "blanc_help", "bleu"} <= metrics
    sweep = record["tables"]["temperature_sweep"]
    assert sweep["temperatures"] == [0.5, 2.0] and len(sweep["correlations"]["kendall"]) == 2
    assert (out / "webnlg2020_lm_temperature.png").exists()


def test_unavailable_model_is_skipped_with_a_reason(tmp_path, shared_data_dir):
    out, _ = _run(tmp_path, "--datasets", "webnlg2020", "--metrics", "bleu,shannon", "--max-docs", "2",
                  "--data-dir", str(shared_data_dir), "--tag", "skip", "--no-plots",
                  "--shannon-model", str(tmp_path / "no-such-model"))
    record = json.loads((out / "webnlg2020_skip.json").read_text())
    assert "shannon" in record["skipped"] and record["skipped"]["shannon"]


def test_speed_aggregator_runs_text_and_reports_missing(tmp_path, shared_data_dir):
    spec = importlib.util.spec_from_file_location("speed_aggregator", REPO / "benchmarks" / "speed.py")
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    out = tmp_path / "speed.md"
    assert speed.main(["--only", "text", "--limit", "2", "--data-dir", str(shared_data_dir), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Command: `python benchmarks/speed.py" in text and "Machine:" in text
    assert "rouge" in text.lower()
    # The generic table helper renders the union of keys.
    lines = speed.rows_to_markdown([{"a": 1.0}, {"b": "x"}])
    assert lines[0] == "| a | b |" and lines[2] == "| 1 |  |"


def test_speed_aggregator_per_module_arguments(tmp_path):
    spec = importlib.util.spec_from_file_location("speed_aggregator_args", REPO / "benchmarks" / "speed.py")
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    assert speed.module_overrides(["shannon:doc_ids=[44, 8]", "fflm:n_systems=25", "blanc:size=base"]) == {
        "shannon": {"doc_ids": [44, 8]}, "fflm": {"n_systems": 25}, "blanc": {"size": "base"}}
    with pytest.raises(SystemExit, match="MODULE:KEY=VALUE"):
        speed.module_overrides(["nosuch:a=1"])

    class Module:  # explicit keywords reach run(); a keyword run() does not take is an error, not dropped
        __name__ = "speed_fake"

        @staticmethod
        def run(n_docs=1, size="small"):
            return [{"n_docs": n_docs, "size": size}]

    rows, used = speed.call_run(Module, {"n_docs": 2, "threads": 4}, {"size": "base"})
    assert rows == [{"n_docs": 2, "size": "base"}] and used == {"n_docs": 2, "size": "base"}
    with pytest.raises(TypeError, match="takes no \\['n_systemz'\\]"):
        speed.call_run(Module, {}, {"n_systemz": 3})


def test_realsumm_slices_select_documents_and_systems(tmp_path):
    import doctest

    spec = importlib.util.spec_from_file_location("realsumm_slices", REPO / "benchmarks" / "realsumm_slices.py")
    slices = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(slices)
    assert doctest.testmod(slices).failed == 0
    with pytest.raises(ValueError, match=r"doc_id\(s\) \[7\] not in REALSumm"):
        path = tmp_path / "r.jsonl"
        path.write_text('{"doc_id": 0, "document": "d", "prediction": "p"}\n')
        slices.realsumm_pairs(path, doc_ids=[7])
    with pytest.raises(FileNotFoundError, match="REALSumm"):
        slices.realsumm_pairs(tmp_path / "missing.jsonl")


def test_device_clock_synchronises_and_records_gpu_memory(monkeypatch):
    """The speed modules' one timer: on CUDA, sync before both clock reads, peak counter reset first,
    start and peak allocation recorded (torch.cuda faked here: the order of calls is the contract)."""
    import doctest

    import torch

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # as the speed modules import it
    import device_clock as clock
    assert doctest.testmod(clock).failed == 0  # the CPU path: wall time only
    events: list[tuple[str, str]] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: events.append(("sync", str(d))))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda d=None: events.append(("allocated", str(d))) or 100)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda d=None: events.append(("reset", str(d))))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda d=None: events.append(("peak", str(d))) or 350)

    def work(x):
        events.append(("call", str(x)))
        return x * 2

    timing = clock.timed(work, "cuda:1", 21)
    assert (timing.result, timing.start_bytes, timing.peak_bytes, timing.peak_above_start_bytes) == (42, 100, 350, 250)
    assert events == [("sync", "cuda:1"), ("allocated", "cuda:1"), ("reset", "cuda:1"), ("call", "21"),
                      ("sync", "cuda:1"), ("peak", "cuda:1")]
    assert clock.Timing(None, 0.0, 500, 400).peak_above_start_bytes == 0  # memory freed during the call
