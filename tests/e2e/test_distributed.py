"""Two CPU processes (torchrun, gloo, accelerate PartialState) give the one-process numbers.

One ``torchrun --nproc_per_node 2`` launch runs every LM metric (InfoLM, Shannon score, BLANC,
FFLM) on tiny random models; rank 0 writes the gathered results, and the test compares them with
the same calls made here in a single process. Each worker also records how much distinct work it
ran itself, so the test fails if the work was not actually split (e.g. both ranks running all of it).
"""

from __future__ import annotations

import pytest

from tests.support.distributed_support import CALLS, run_two_vs_one


@pytest.mark.slow
def test_two_cpu_processes_match_one(tmp_path, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir):
    run_two_vs_one(tmp_path, CALLS, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir)


@pytest.mark.slow
def test_two_processes_on_one_gpu_match_one(tmp_path, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir):
    """accelerate's NCCL state with both processes on cuda:0 (a one-GPU machine, ``accelerate
    launch --num_processes 2``): the engine still gathers (over gloo) the one-process numbers."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (run on the GPU machine)")
    run_two_vs_one(tmp_path, CALLS, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir, cpu=False)
