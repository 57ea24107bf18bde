"""distributed_map and the engine under 2 processes (torchrun, gloo, CPU) equal the 1-process run."""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent(
    """
    import pickle, sys
    from accelerate import PartialState
    from nlgmetrics.engine import (CausalQuery, MaskedQuery, causal_target_scores, distributed_map,
                                   iter_causal, iter_masked, load_lm)

    def causal_queries(tok):
        bos = tok.bos_token_id
        texts = ["The cat sat.", "A dog barked at the mailman twice.", "Rain.", "Long long ago, in a far land."]
        ids = [tuple(tok(t)["input_ids"]) for t in texts]
        doc = ids[1] + ids[3]
        qs = [CausalQuery((bos,), i) for i in ids] + [CausalQuery((bos,) + doc, i) for i in ids]
        return qs + qs[:3]  # duplicates too

    def masked_queries(tok):
        out = []
        for t in ["the cat sat on the mat.", "hello world", "a b c d e f g h"]:
            ids = tuple(tok(t)["input_ids"])
            out += [MaskedQuery(ids, (p,)) for p in range(1, len(ids) - 1)]
        return out

    def run(bert_dir, gpt2_dir):
        rank = PartialState().process_index
        causal = load_lm(gpt2_dir, device="cpu")
        masked = load_lm(bert_dir, device="cpu")
        c = dict(iter_causal(causal, causal_queries(causal.tokenizer),
                             lambda lg, q: (lg.double().log_softmax(-1).max(-1).values.numpy(), rank),
                             token_budget=40, progress=False))
        m = dict(iter_masked(masked, masked_queries(masked.tokenizer),
                             lambda lg, q: (lg.double().log_softmax(-1).max(-1).values.numpy(), rank),
                             token_budget=40, progress=False))
        d = distributed_map(list(range(11)), lambda shard: [(x * x, rank) for x in shard])
        return c, m, d

    if __name__ == "__main__":
        state = PartialState(cpu=True)
        result = run(sys.argv[1], sys.argv[2])
        if state.is_main_process:
            with open(sys.argv[3], "wb") as f:
                pickle.dump((state.num_processes, result), f)
    """
)


def _values(result: dict) -> dict:
    return {k: v[0] for k, v in result.items()}


def _ranks(result: dict) -> set:
    return {v[1] for v in result.values()}


def test_two_processes_equal_one(tmp_path, tiny_bert_dir, tiny_gpt2_dir):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out.pkl"
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               str(script), str(tiny_bert_dir), str(tiny_gpt2_dir), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=170)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out, "rb") as handle:
        processes, (causal2, masked2, mapped2) = pickle.load(handle)
    assert processes == 2

    # Same job in this (single) process.
    spec = importlib.util.spec_from_file_location("nlgmetrics_distributed_job", script)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    causal1, masked1, mapped1 = job.run(str(tiny_bert_dir), str(tiny_gpt2_dir))

    assert [v for v, _ in mapped2] == [x * x for x in range(11)] == [v for v, _ in mapped1]
    assert {r for _, r in mapped2} == {0, 1}  # both processes really took part
    assert _ranks(causal2) == {0, 1} and _ranks(masked2) == {0, 1}
    for one, two in ((causal1, causal2), (masked1, masked2)):
        assert sorted(one) == sorted(two)
        for key in one:
            np.testing.assert_allclose(_values(two)[key], _values(one)[key], rtol=0, atol=1e-6)
