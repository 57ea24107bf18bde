"""The two-processes-versus-one harness: every LM metric under ``torchrun --nproc_per_node 2``
(gloo on CPU, or NCCL with both ranks on one GPU) against the same calls in this process.

Imported by tests/e2e/test_distributed.py and tests/unit/engine/test_store_nodes.py as
``from tests.support.distributed_support import ...``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

DOCUMENTS = [
    "The storm closed the harbour on Monday. Boats stayed in port. Officials expect calm seas.",
    "A new library opened in the town centre. It has three floors of books.",
    "The storm closed the harbour on Monday. Boats stayed in port. Officials expect calm seas.",
]
SUMMARIES = ["A storm closed the harbour.", "A library opened.", "Boats stayed in port all week."]
CANDIDATES = ["the cat sat on the mat", "a dog barked at night", "rain fell all day"]
REFERENCES = ["a cat was sitting on the mat", "the dog barked loudly at night", "it rained all day long"]

# What each metric computes, kept in one place so that the worker and the test make the same calls.
# batch_size=1 makes several work units per metric, so that both processes get a share.
# Each keeps the whole MetricResult (every column, the aggregate, the per-example details such as
# Shannon's s and BLANC's counts, and the signature): the two-process run must agree on all of it.
METRIC_CALLS = {
    "infolm": """
    from nlgmetrics.infolm import infolm
    r = infolm(data["candidates"], data["references"], model=models["bert"],
               information_measure="fisher_rao_distance", idf=True, batch_size=1, progress=False)
    out["infolm"] = r.to_dict()
    r = infolm(data["candidates"], data["references"], model=models["gpt2"],
               information_measure="kl_divergence", batch_size=1, progress=False)
    out["infolm_causal"] = r.to_dict()
""",
    "shannon_score": """
    from nlgmetrics.shannon import shannon_score
    r = shannon_score(data["summaries"], data["documents"], model=models["gpt2"], batch_size=1,
                      progress=False)
    out["shannon_score"] = r.to_dict()
""",
    "blanc": """
    from nlgmetrics.blanc import blanc
    r = blanc(data["summaries"], data["documents"], variant="help", model=models["copy_bert"],
              batch_size=1, progress=False)
    out["blanc"] = r.to_dict()
""",
    "fflm": """
    from nlgmetrics.fflm import fflm
    r = fflm(data["summaries"], data["documents"], model=models["llama"], batch_size=1, progress=False)
    out["fflm"] = r.to_dict()
""",
}


def make_calls(names=tuple(METRIC_CALLS)) -> str:
    """Source of ``run_all(models, data) -> dict`` running the metrics ``names``."""
    body = "".join(METRIC_CALLS[name] for name in names)
    return "def run_all(models, data):\n    out = {}\n" + body + "    return out\n"


CALLS = make_calls()

WORKER = textwrap.dedent(
    '''
    import json, os, sys, traceback
    import torch
    torch.set_num_threads(1)

    # Each rank writes its own traceback to a file: torchrun interleaves both ranks' output, and a
    # rank that fails because its peer crashed would otherwise bury the peer's real error.
    def record_failure(kind, value, tb):
        rank = os.environ.get("RANK", "?")
        with open(f"{sys.argv[1]}.rank{rank}.error", "w") as handle:
            handle.write("".join(traceback.format_exception(kind, value, tb)))
        sys.__excepthook__(kind, value, tb)
    sys.excepthook = record_failure
    from accelerate import PartialState

    state = PartialState(STATE_ARGUMENTS)  # cpu=True: a gloo process group on CPU; else NCCL on GPUs
    assert state.num_processes == 2, state.num_processes
    import nlgmetrics.engine.runner as runner

    # Count the work units each process runs itself, to show the work is split, not repeated.
    local_units = []
    original = runner.distributed_map
    def counting_map(items, fn):
        def counted(shard):
            local_units.append(len(shard))
            return fn(shard)
        return original(items, counted)
    runner.distributed_map = counting_map

    config = json.loads(open(sys.argv[1]).read())
    namespace = {}
    exec(open(config["calls"]).read(), namespace)
    results = namespace["run_all"](config["models"], config["data"])
    # The command line under torchrun: work split the same way, only rank 0 writes the file.
    from nlgmetrics.apps.cli import main as cli_main
    status = cli_main(["score", "-p", config["cli_predictions"], "-s", config["cli_sources"],
                       "-m", "fflm", "--model", config["models"]["llama"], "--option",
                       "fflm.batch_size=1", "--json", config["cli_out"], "--quiet", "--no-progress"])
    assert status == 0
    # The engine gathers its results over a gloo group of its own (NCCL refuses two processes on
    # one GPU): the groups it made, by backend. The worker's own gather and barrier use it too.
    import torch.distributed as dist
    import nlgmetrics.engine.distributed as engine_distributed
    object_backends = sorted(str(dist.get_backend(g)) for g in engine_distributed._OBJECT_GROUPS.values())
    shard_sizes = [None] * state.num_processes
    dist.all_gather_object(shard_sizes, sum(local_units), group=engine_distributed._object_group())
    if state.is_main_process:
        with open(config["out"], "w") as handle:
            json.dump({"results": results, "shard_sizes": shard_sizes, "object_backends": object_backends,
                       "num_processes": state.num_processes, "device": str(state.device)}, handle)
    dist.barrier(group=engine_distributed._object_group())
    '''
)


def assert_close(got, want, path="", tol=1e-5):
    """Nested results equal, floats within ``tol`` (relative above 1); ``path`` names the mismatch."""
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for key in want:
            assert_close(got[key], want[key], f"{path}.{key}", tol)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), path
        for index, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{path}[{index}]", tol)
    elif isinstance(want, float):
        assert abs(got - want) <= tol * max(1.0, abs(want)), (path, got, want)
    else:
        assert got == want, (path, got, want)


def run_two_vs_one(tmp_path, calls, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir, cpu=True):
    # A random BERT predicts nothing right, so BLANC counts would all be 0 and compare trivially;
    # the BLANC parity tests' copy-model (copy_bert_dir) predicts some masked tokens from context.
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    models = {"bert": str(tiny_bert_dir), "gpt2": str(tiny_gpt2_dir), "llama": str(tiny_llama_dir),
              "copy_bert": str(copy_bert_dir)}
    data = {
        "documents": DOCUMENTS,
        "summaries": SUMMARIES,
        "candidates": CANDIDATES,
        "references": REFERENCES,
    }
    out = tmp_path / "gathered.json"
    config = tmp_path / "config.json"
    cli_out = tmp_path / "cli.json"
    predictions_file = tmp_path / "summaries.txt"
    predictions_file.write_text("".join(f"{s}\n" for s in SUMMARIES))
    sources_file = tmp_path / "documents.txt"
    sources_file.write_text("".join(f"{d}\n" for d in DOCUMENTS))
    calls_file = tmp_path / "calls.py"
    calls_file.write_text(calls)
    config.write_text(json.dumps({"models": models, "data": data, "out": str(out), "calls": str(calls_file),
                                  "cli_out": str(cli_out), "cli_predictions": str(predictions_file),
                                  "cli_sources": str(sources_file)}))
    script = tmp_path / "worker.py"
    script.write_text(WORKER.replace("STATE_ARGUMENTS", "cpu=True" if cpu else ""))
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    launched = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node", "2", str(script), str(config)],
        env=env, capture_output=True, text=True, timeout=240,
    )
    if launched.returncode != 0:
        own_errors = "".join(f"--- {path.name} ---\n{path.read_text()}\n"
                             for path in sorted(tmp_path.glob("config.json.rank*.error")))
        raise AssertionError(f"torchrun exited {launched.returncode}.\n{own_errors}"
                             f"--- stdout ---\n{launched.stdout[-3000:]}\n--- stderr ---\n{launched.stderr[-5000:]}")
    gathered = json.loads(out.read_text())
    assert gathered["num_processes"] == 2
    assert gathered["device"] == ("cpu:0" if cpu else "cuda:0")  # PartialState numbers the CPU too
    assert gathered["object_backends"] == ["gloo"]

    namespace: dict = {}
    exec(calls, namespace)  # the same calls, in this single process
    single = json.loads(json.dumps(namespace["run_all"](models, data)))
    assert_close(gathered["results"], single)
    # The CLI run under torchrun wrote the one-process FFLM numbers (file written once, by rank 0).
    from nlgmetrics.fflm import fflm

    want = fflm(SUMMARIES, DOCUMENTS, model=models["llama"], progress=False)
    cli = json.loads(cli_out.read_text())["metrics"]["fflm"]  # the CLI writes result.to_dict()
    assert_close(cli["scores"]["fflm"], want.scores["fflm"])
    assert_close(cli, json.loads(json.dumps(want.to_dict())))
    assert cli["signature"] == want.signature
    for name, result in single.items():  # every metric's columns were compared, not an empty dict
        assert result["scores"] and all(len(v) == 3 for v in result["scores"].values()), name
    if "blanc" in single:  # the comparison is not between all-zero counts
        counts = single["blanc"]["details"]["counts"]
        assert any(cell for example in counts for row in example for cell in row[1:])
    # Both processes ran a share of the distinct work (neither ran it all nor nothing).
    sizes = gathered["shard_sizes"]
    assert len(sizes) == 2 and all(size > 0 for size in sizes), sizes
