"""Smoke tests: each benchmark runs end to end on a tiny slice (tiny random models for LM metrics).

Numbers are checked against an independent computation (sacrebleu + scipy), not against the runner.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from benchmarks.meta.runner import main as meta_main

REPO = Path(__file__).resolve().parents[2]


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
    assert "Command: `python -m benchmarks.meta_eval" in md
    assert (out / "realsumm_t_distributions.png").stat().st_size > 1000


def test_lm_metrics_on_tiny_models(tmp_path, shared_data_dir, tiny_gpt2_dir, tiny_bert_dir):
    out, cache = _run(
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
    text = record["tables"]["temperature_sweep_text"]
    assert text["level"] == "text" and text["n_docs"] == [2, 2] and (out / "webnlg2020_lm_temperature_text.png").exists()
    # The text-level point at T=2 recomputed here: per item, scipy's Kendall tau of the stored
    # (oriented) Fisher-Rao scores against the human scores over the systems, averaged over the items.
    from benchmarks.meta.data import load_webnlg2020
    from benchmarks.meta.runner import _content_key

    stored = {}
    for path in (cache / "webnlg2020").glob("infolm-*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        if lines[0]["options"]["infolm_temperature"] == 2.0 and lines[0]["options"]["infolm_measures"] == ["fisher_rao_distance"]:
            for line in lines[1:]:
                stored.update(line["scores"])
    per_item = {}
    for e in load_webnlg2020(shared_data_dir, max_docs=2):
        if _content_key(e) in stored:
            per_item.setdefault(e.doc, []).append((stored[_content_key(e)]["infolm_fisher_rao_distance"], e.human[text["human"]]))
    taus = [stats.kendalltau(*zip(*pairs)).statistic for pairs in per_item.values()]
    assert len(taus) == 2 and text["correlations"]["kendall"][1] == pytest.approx(float(np.nanmean(taus)), abs=1e-12)


def test_sharded_runs_share_one_cache_and_rebuild_the_unsharded_tables(tmp_path, shared_data_dir, tiny_gpt2_dir):
    """Two --shard processes' scores, read back with --from-scores, give the tables of one unsharded run."""
    common = ["--datasets", "webnlg2020", "--metrics", "bleu,fflm", "--max-docs", "4", "--data-dir", str(shared_data_dir),
              "--fflm-model", str(tiny_gpt2_dir), "--no-plots", "--chunk-docs", "1"]
    whole, _ = _run(tmp_path / "whole", *common, "--tag", "w")
    for k in ("0/2", "1/2"):
        out, cache = _run(tmp_path / "sharded", *common, "--shard", k, "--tag", f"s{k[0]}")
        record = json.loads((out / f"webnlg2020_s{k[0]}.json").read_text())
        assert record["shard"] == [int(k[0]), 2]
    docs = {k: {json.loads(line)["scores"].popitem()[0].split("|")[0] for line in p.read_text().splitlines()[1:]}
            for k, p in [("fflm", next((cache / "webnlg2020").glob("fflm-*.jsonl")))]}
    assert len(docs["fflm"]) == 4  # both shards wrote their documents into one file
    rebuilt, _ = _run(tmp_path / "sharded", *common, "--from-scores", "--tag", "r")
    got = json.loads((rebuilt / "webnlg2020_r.json").read_text())["tables"]["results"]
    want = json.loads((whole / "webnlg2020_w.json").read_text())["tables"]["results"]
    assert got == want
    with pytest.raises(SystemExit):
        meta_main(["--shard", "2/2"])


def test_unavailable_model_is_skipped_with_a_reason(tmp_path, shared_data_dir):
    out, _ = _run(tmp_path, "--datasets", "webnlg2020", "--metrics", "bleu,shannon", "--max-docs", "2",
                  "--data-dir", str(shared_data_dir), "--tag", "skip", "--no-plots",
                  "--shannon-model", str(tmp_path / "no-such-model"))
    record = json.loads((out / "webnlg2020_skip.json").read_text())
    assert "shannon" in record["skipped"] and record["skipped"]["shannon"]


def test_speed_aggregator_runs_text_and_reports_missing(tmp_path, shared_data_dir):
    from benchmarks.harness import markdown_table
    from benchmarks.speed import side_by_side as speed

    out = tmp_path / "speed.md"
    assert speed.main(["--only", "text", "--limit", "2", "--data-dir", str(shared_data_dir), "--out", str(out)]) == 0
    text = out.read_text()
    assert "- command: `python -m benchmarks.speed --only text" in text and "- machine:" in text
    assert "rouge" in text.lower() and "(`speed/text.py`)" in text
    # The generic table helper renders the union of keys.
    lines = markdown_table([{"a": 1.0}, {"b": "x"}])
    assert lines[0] == "| a | b |" and lines[2] == "| 1 |  |"


def test_speed_aggregator_per_module_arguments(tmp_path):
    from benchmarks.speed import side_by_side as speed

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


# ------------------------------------------------------------------------------------------------
# the meta-evaluation's metric runs: the library's MetricResult columns, oriented higher = better


def _examples():
    from benchmarks.meta.data import Example

    rows = [
        ("the cat sat on the mat", ("a cat was sitting on the mat", "the cat sat"), "The cat sat on the mat. It slept."),
        ("a dog barked at night", ("the dog barked loudly at night",), "A dog barked. The night was long."),
        ("rain fell all day", ("it rained all day long", "rain all day"), "It rained. The streets were wet all day."),
    ]
    return [Example(f"{i}|s", str(i), "s", "all", p, refs, src, {"h": float(i)}) for i, (p, refs, src) in enumerate(rows)]


def test_meta_text_families_equal_the_anchor_packages():
    """ROUGE and BLEU as the runner reads them (RougeResult / BleuResult columns) equal rouge-score
    and sacrebleu computed here."""
    import sacrebleu
    from rouge_score import rouge_scorer

    from benchmarks.meta.metrics import FAMILIES

    examples = _examples()
    rouge, signature = FAMILIES["rouge"].fn(examples, {})
    assert set(rouge) == set(FAMILIES["rouge"].outputs) and signature.startswith("rouge_family|")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    for i, e in enumerate(examples):
        expected = scorer.score_multi(list(e.references), e.prediction)
        for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            assert rouge[t][i] == pytest.approx(expected[t].fmeasure, abs=1e-12), (t, i)
        for t in ("rouge1", "rouge2"):
            # the recall of the reference with the best F (score_multi's rule, as ROUGE's "best")
            assert rouge[f"{t}_r"][i] == pytest.approx(expected[t].recall, abs=1e-12), (t, i)
    bleu, signature = FAMILIES["bleu"].fn(examples, {})
    assert signature.startswith("bleu|")
    assert bleu["bleu"] == pytest.approx(
        [sacrebleu.sentence_bleu(e.prediction, list(e.references)).score for e in examples], abs=1e-9)


def test_meta_infolm_one_pass_equals_one_call_per_measure(tiny_bert_dir):
    """Several measures from one infolm_multi pass: each equals its own infolm() call, negated (a
    distance, lower = better, becomes higher = better); idf over the given texts equals idf=True
    when those texts are the call's references."""
    from nlgmetrics.core.signature import parse_signature
    from nlgmetrics.infolm import infolm
    from benchmarks.meta.metrics import FAMILIES

    examples = _examples()
    preds = [e.prediction for e in examples]
    refs = [list(e.references) for e in examples]
    measures = ["fisher_rao_distance", "js_divergence", "l1_distance"]
    options = {"infolm_model": str(tiny_bert_dir), "infolm_measures": measures, "infolm_temperature": 0.5,
               "infolm_alpha": None, "infolm_beta": None}
    for idf, extra in ((False, {}), (True, {"infolm_idf_texts": sorted({r for rs in refs for r in rs}),
                                            "infolm_idf": "toy-references"})):
        scores, signature = FAMILIES["infolm"].fn(examples, options | extra)
        assert set(scores) == {f"infolm_{m}" for m in measures}
        signatures = signature.split(" ; ")
        for measure, sig in zip(measures, signatures, strict=True):
            alone = infolm(preds, refs, model=str(tiny_bert_dir), information_measure=measure, temperature=0.5,
                           idf=idf, progress=False)
            assert not alone.column("infolm").higher_is_better
            assert scores[f"infolm_{measure}"] == pytest.approx([-v for v in alone.scores["infolm"]], abs=1e-6)
            # the same signature (the measure's own), except idf: the dataset's table vs the call's references
            got, want = parse_signature(sig), parse_signature(alone.signature)
            got_idf, want_idf = got.pop("idf"), want.pop("idf")
            if idf:
                assert got_idf.startswith("table-") and want_idf == "refs", (got_idf, want_idf)
            else:
                assert got_idf == want_idf == "no"
            assert got == want
        assert any(v != 0 for v in scores["infolm_fisher_rao_distance"])  # not trivially all zero


def test_temperature_sweep_prefill_stores_what_separate_runs_store(tiny_gpt2_dir, tmp_path):
    """The sweep's one-pass prefill writes, per temperature, the cache file and the numbers that
    compute_family run at that temperature alone writes; a rerun computes nothing, and a partly
    filled sweep computes only what it lacks."""
    from benchmarks.meta.cache import ScoreCache
    from benchmarks.meta.metrics import FAMILIES
    from benchmarks.meta.runner import cache_key_options, compute_family, prefill_temperature_sweep

    examples = _examples()
    options = {"infolm_model": str(tiny_gpt2_dir), "infolm_measures": ["fisher_rao_distance"], "infolm_temperature": 0.25,
               "infolm_alpha": None, "infolm_beta": None, "infolm_idf": None}
    temps = [0.1, 0.5, 2.0]
    family = FAMILIES["infolm"]
    alone = {}
    for t in temps:
        values, info = compute_family(family, examples, {**options, "infolm_temperature": t}, tmp_path / "alone", "toy",
                                      chunk_docs=2)
        alone[t] = (values, Path(info["cache_file"]).name)
    # Every temperature already has its first chunk (documents 0 and 1): the prefill computes document 2.
    for t in temps:
        done = ScoreCache(tmp_path / "alone", "toy", "infolm", cache_key_options(family, {**options, "infolm_temperature": t}))
        lines = done.path.read_text().splitlines()
        partial = tmp_path / "swept" / "toy" / done.path.name
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(lines[0] + "\n" + lines[1] + "\n")
    assert prefill_temperature_sweep(examples, options, temps, tmp_path / "swept", "toy", chunk_docs=2) == 1
    assert prefill_temperature_sweep(examples, options, temps, tmp_path / "swept", "toy", chunk_docs=2) == 0
    for t in temps:
        values, info = compute_family(family, examples, {**options, "infolm_temperature": t}, tmp_path / "swept", "toy",
                                      chunk_docs=2)
        assert info["computed"] == 0
        assert Path(info["cache_file"]).name == alone[t][1]
        assert values == alone[t][0]  # same chunks, so the same batches: bit for bit
    assert len({alone[t][0]["infolm_fisher_rao_distance"][0] for t in temps}) == 3


def test_meta_reference_free_families_read_the_library_columns(tiny_gpt2_dir, tiny_bert_dir):
    """Shannon, FFLM and BLANC-help families: (prediction, source) to the library, the columns read
    by name, every one higher = better (kept as they are)."""
    from nlgmetrics.blanc import blanc
    from nlgmetrics.fflm import fflm
    from benchmarks.meta.metrics import FAMILIES
    from nlgmetrics.shannon import shannon_score

    examples = _examples()
    preds, sources = [e.prediction for e in examples], [e.source for e in examples]
    options = {"shannon_model": str(tiny_gpt2_dir), "fflm_model": str(tiny_gpt2_dir), "blanc_model": str(tiny_bert_dir)}
    calls = {
        "shannon": (shannon_score(preds, sources, model=str(tiny_gpt2_dir), progress=False),
                    {name: name for name in ("shannon_score", "information_difference", "blanc_shannon")}),
        "fflm": (fflm(preds, sources, model=str(tiny_gpt2_dir), progress=False), {"fflm": "fflm"}),
        "blanc": (blanc(preds, sources, variant="help", model=str(tiny_bert_dir), progress=False), {"blanc_help": "blanc"}),
    }
    for family, (result, columns) in calls.items():
        scores, signature = FAMILIES[family].fn(examples, options)
        assert set(scores) == set(FAMILIES[family].outputs) == set(columns), family
        assert signature == result.signature
        for output, column in columns.items():
            assert result.column(column).higher_is_better
            assert scores[output] == result.scores[column], (family, output)


def test_gpu_meta_eval_script_refuses_a_machine_without_cuda(tmp_path):
    """The one-script GPU meta-evaluation stops at once, with the reason, where there is no GPU
    (instead of starting a days-long CPU run); ONLY/DTYPES select what it would run."""
    import subprocess

    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the script would start the real run")
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_meta_eval.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OUT": str(tmp_path), "ONLY": "fflm", "DTYPES": "float32"})
    assert done.returncode != 0
    assert "no CUDA device" in done.stderr
    assert not list(tmp_path.iterdir())


def test_speed_limits_counts_attention_and_compares_dtypes(tiny_llama_dir):
    """speed_limits on a tiny Llama: the attention pairs of a Shannon call are the engine's causal
    pairs (more than the real tokens, since each token sees several keys), the rate with attention
    is above the rate without, and the bf16-vs-fp32 table reports each column's largest change."""
    from benchmarks.studies import limits as speed_limits
    from nlgmetrics.engine import load_lm

    lm = load_lm(str(tiny_llama_dir), "causal", device="cpu")
    documents = ["The cat sat on the mat. It was warm there.", "Rain fell all day. The river rose."]
    summaries = ["A cat sat.", "It rained."]
    row = speed_limits.measure("shannon", lm, documents, summaries, documents)
    config = lm.model.config
    per_pair = 4 * config.num_hidden_layers * config.num_attention_heads * (
        getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)
    assert row["attention_pairs"] > row["real"] > 0
    assert row["attention_gflop"] == pytest.approx(per_pair * row["attention_pairs"] / 1e9)
    assert row["gflops_with_attention"] > row["gflops"] > 0
    moved = {column: [v + 0.5 for v in values] for column, values in row["scores"].items()}
    run = {"rows": [dict(row, dtype="float32"), dict(row, dtype="bfloat16", scores=moved)]}
    table = "\n".join(speed_limits._dtype_differences(run))
    assert "| shannon | bfloat16 | 2 |" in table
    assert all(f"{column} 5.0e-01" in table for column in row["scores"])


def test_speed_limits_records_the_fast_paths_each_model_was_granted(tiny_llama_dir):
    """The fast paths each model takes are in the run (they change the positions counted), named
    per dtype and model in the run's header; a path not taken is absent, none taken says so."""
    import dataclasses

    from benchmarks.studies import limits as speed_limits
    from nlgmetrics.engine import load_lm

    lm = load_lm(str(tiny_llama_dir), "causal", device="cpu")
    assert speed_limits.fast_paths(lm) == ["gathered head rows"]
    plain = dataclasses.replace(lm, gather_head=False)
    run = {"probes": {"float32": {"limit": 1.0, "before": 1.0, "after": 1.0}}, "machine": "m", "threads": 1,
           "load_average": [0.0], "versions": "v", "planner": "p", "engine": "e", "rows": [],
           "workload": {"n_docs": 1, "per_doc": 1, "examples": 1},
           "fast_paths": {"float32": {"smollm2-135m": speed_limits.fast_paths(lm)},
                          "bfloat16": {"smollm2-135m": speed_limits.fast_paths(plain)}}}
    text = speed_limits.render({"r": run})
    assert ("- engine fast paths taken (decided from each model at load): float32 smollm2-135m: "
            "gathered head rows; bfloat16 smollm2-135m: none") in text


def test_random_135m_shape_is_smollm2s_shape():
    """The random stand-in for SmolLM2-135M (speed runs where its weights cannot travel) has its
    real config's shape and exactly its parameter count (both built on the meta device)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig

    from benchmarks.studies.limits import body_parameters
    from nlgmetrics.engine.smollm2 import smollm2_dir
    from nlgmetrics.testing import _SHAPES

    real = AutoConfig.from_pretrained(smollm2_dir())
    shape = _SHAPES[("llama", "135m")]
    for key, value in shape.items():
        assert getattr(real, key) == value, key
    stand_in = LlamaConfig(vocab_size=real.vocab_size, tie_word_embeddings=True, **shape)
    with torch.device("meta"):
        ours, theirs = AutoModelForCausalLM.from_config(stand_in), AutoModelForCausalLM.from_config(real)
    assert body_parameters(ours) == body_parameters(theirs)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())


def test_speed_limits_device_and_random_weights_reach_the_models_and_the_report(tiny_llama_dir, monkeypatch,
                                                                               shared_data_dir):
    """--device and --random-weights: the probes and the models get the device, the SmolLM2 rows
    load the random stand-in, and the report says so (the rest of the run as on a CPU)."""
    from benchmarks.studies import limits as speed_limits

    seen: dict[str, list] = {"probe": [], "built": []}
    monkeypatch.setattr(speed_limits, "matmul_rate", lambda dtype, seconds=1.5, device="cpu":
                        seen["probe"].append(device) or 100.0)
    monkeypatch.setattr(speed_limits, "model_shape_rates", lambda model: {"body": 50.0, "head": 50.0, "rows": 1})

    def stand_in(architecture, size):
        seen["built"].append((architecture, size))
        return tiny_llama_dir, True

    monkeypatch.setattr(speed_limits, "cached_random_model", stand_in)
    run_ = speed_limits.run(data=shared_data_dir / "realsumm" / "realsumm.jsonl", n_docs=1, per_doc=1,
                            metrics=("infolm_causal",), dtypes=("float32",), device="cpu", random_weights=True)
    assert seen["built"] == [("llama", "135m")] and set(seen["probe"]) == {"cpu"}
    [row] = run_["rows"]
    assert row["hidden"] == 32 and row["real"] > 0  # the tiny stand-in ran, not the real weights
    run_.update(machine="m", versions="v")
    text = speed_limits.render({"r": run_})
    assert "SmolLM2-135M rows: random weights of its shape" in text
    assert "Per-batch KV-cache copy" in text  # a CPU run keeps its KV-copy table


def test_stored_scores_export_puts_a_run_beside_itself(tmp_path, shared_data_dir):
    """benchmarks.stored_scores: a stored ROUGE file exported with a suffix and read back with
    --scores gives the same correlations as the family itself (same outputs, same resamples),
    every row joins, and the paired test of a column against its own copy is a zero difference."""
    from benchmarks import stored_scores

    out, cache = _run(tmp_path, "--datasets", "realsumm", "--metrics", "rouge", "--max-docs", "3",
                      "--data-dir", str(shared_data_dir), "--tag", "t", "--no-plots")
    [stored] = sorted((cache / "realsumm").glob("rouge-*.jsonl"))
    csv_path = tmp_path / "copy.csv"
    counts = stored_scores.write_scores_csv(stored, "realsumm", "_copy", csv_path)
    assert counts["rows"] == 75  # 3 documents x 25 systems
    status = meta_main(["--datasets", "realsumm", "--metrics", "rouge", "--max-docs", "3", "--data-dir",
                        str(shared_data_dir), "--scores", str(csv_path), "--baseline", "rouge2", "--bootstrap", "30",
                        "--out-dir", str(tmp_path / "out2"), "--cache-dir", str(cache), "--tag", "u", "--no-plots"])
    assert status == 0
    record = json.loads((tmp_path / "out2" / "realsumm_u.json").read_text())
    rows = record["tables"]["results"]
    by = {(r["split"], r["level"], r["method"], r["metric"]): r for r in rows}
    checked = 0
    for (split, level, method, metric), row in by.items():
        copy = by.get((split, level, method, metric + "_copy"))
        if copy is None:
            continue
        same = [copy[k] for k in ("value", "low", "high")], [row[k] for k in ("value", "low", "high")]
        assert same[0] == same[1], (split, level, method, metric)
        checked += 1
    assert checked >= 12
    paired = by[("all", "text", "kendall", "rouge2_copy")]["vs_baseline"]
    assert paired["diff"] == 0.0
    agreement = stored_scores.compare_stored(stored, stored)
    assert agreement["rouge2"]["n"] == 75 and agreement["rouge2"]["max_abs_diff"] == 0.0
    assert agreement["rouge2"]["pearson"] == pytest.approx(1.0) and agreement["rouge2"]["kendall"] == pytest.approx(1.0)


def test_model_shape_probe_times_exactly_the_body_matmuls_of_a_token(tiny_llama_dir):
    """The model-shape limit times every body linear layer once: their weights are the body's
    parameters less the norms' (the exact-work count's 2 x body params per token is those matmuls,
    up to the few norm weights), and it gives a positive rate for the body and the head."""
    from benchmarks.studies import limits as speed_limits
    from nlgmetrics.engine import load_lm

    model = load_lm(str(tiny_llama_dir), "causal", device="cpu").model
    linears = speed_limits.body_linears(model)
    norms = sum(p.numel() for m in model.modules() if "Norm" in type(m).__name__ for p in m.parameters())
    assert sum(m.in_features * m.out_features for m in linears) == speed_limits.body_parameters(model) - norms
    assert model.get_output_embeddings() not in linears and norms > 0
    rates = speed_limits.model_shape_rates(model, rows=16, seconds=0.01)
    assert rates["body"] > 0 and rates["head"] > 0 and rates["rows"] == 16


def test_store_write_benchmark_fills_stores_and_reports_each_size(tmp_path):
    """The write-cost benchmark builds stores of the sizes asked for (entries of VALUE_BYTES
    each) and writes a report with the command, the machine and one row per size."""
    import sqlite3

    from benchmarks.studies.store_writes import main as writes_main

    out = tmp_path / "writes.md"
    assert writes_main(["--sizes", "0,2e6", "--writes", "3", "--dir", str(tmp_path / "stores"), "--out", str(out)]) == 0
    report = out.read_text()
    assert "- command: `python -m benchmarks.studies.store_writes --sizes" in report and "- machine: " in report
    from benchmarks.studies.store_writes import VALUE_BYTES

    rows = [line.split("|") for line in report.splitlines() if line.startswith("| 0")]
    assert [r[1].strip() for r in rows] == ["0 GB", "0.002 GB", "0.002 GB (at its cap)"]
    entries = int(rows[1][2].replace(",", ""))
    assert entries == -(-2_000_000 // VALUE_BYTES) or entries == 2_000_000 // VALUE_BYTES  # values up to 2 MB
    assert not any((tmp_path / "stores").glob("**/*.sqlite"))  # the stores are deleted afterwards
