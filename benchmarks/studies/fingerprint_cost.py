"""What the weights fingerprint costs per call for quantized and offloaded models, against a plain one.

A model *object* is hashed on every call that passes it (``module_fingerprint``: a write through
``.data`` leaves no other trace), so its cost is paid per call. Each row is one kind of object
built from the same checkpoint (SmolLM2-135M, the offline alias's float32 folder; ``--model tiny``:
a random tiny Llama, seconds): plain float32, bitsandbytes 8-bit on CPU, torchao int8
weight-only, accelerate with every decoder layer offloaded to the disk, and the object loaded
from the GGUF-dequantized folder. For each: the hash alone and a repeated ``load_lm`` (the whole
per-call check: values hashed, the load cache hit), wall-clock seconds, median of ``--repeats``
interleaved rounds after a warm-up. Two rows for a model passed by name, for scale: a folder's
first load in a process hashes its loaded tensors once (``loaded_fingerprint``) and a second
load of the same files reads none; the alias is signed by its GGUF file's recorded sha256.

    python -m benchmarks.studies.fingerprint_cost
"""

from __future__ import annotations

import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.harness import (
    command_line,
    interleaved,
    load_average,
    markdown_table,
    parser,
    report_head,
    result_path,
    write_report,
)

OUT = result_path("fingerprint_cost")
READING = [
    "- *MB hashed*: the bytes the hash reads. A quantized object is read as stored: its packed values and",
    "  scales (bitsandbytes' int8 weights and their statistics, torchao's `Int8Tensor` `qdata` and `scale`),",
    "  the embeddings and norms in float32; so it costs less per call than the plain float32 model.",
    "- A disk-offloaded object is hashed as the same model on one device (its `weights` equal the plain",
    "  row's): every offloaded weight is read back from the offload folder on every call (from the page cache",
    "  once read), one tensor at a time.",
    "- *load_lm per call*: the whole per-call check of an object (its hash and the load cache's hit), which",
    "  the hash dominates.",
    "- By name: the first load of a folder in a process hashes its loaded tensors once (the difference",
    "  between the first two rows); a later load of unchanged files (after `release()`, or on another",
    "  device) reads none. The alias is signed by its GGUF file's sha256, recorded when it was converted.",
]


def _quiet(build: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build()


def _tiny_llama_dir(folder: Path) -> Path:
    from nlgmetrics.testing import build_random_model

    return Path(build_random_model("llama", folder, size="tiny"))


def _plain(path: Path) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()


def _bnb_8bit(path: Path) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    return _quiet(lambda: AutoModelForCausalLM.from_pretrained(
        str(path), quantization_config=BitsAndBytesConfig(load_in_8bit=True), device_map="cpu").eval())


def _torchao_int8(path: Path) -> torch.nn.Module:
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    model = _plain(path)
    quantize_(model, Int8WeightOnlyConfig())
    return model


def _disk_offloaded(path: Path, folder: Path) -> torch.nn.Module:
    """Every decoder layer on the disk; the (tied) embeddings, the norm and the head on the CPU."""
    from transformers import AutoConfig, AutoModelForCausalLM

    layers = AutoConfig.from_pretrained(str(path)).num_hidden_layers
    device_map = {"model.embed_tokens": "cpu", "model.norm": "cpu", "model.rotary_emb": "cpu", "lm_head": "cpu",
                  **{f"model.layers.{i}": "disk" for i in range(layers)}}
    return _quiet(lambda: AutoModelForCausalLM.from_pretrained(
        str(path), dtype=torch.float32, device_map=device_map, offload_folder=str(folder)).eval())


def _hashed_megabytes(model: torch.nn.Module) -> float:
    """Bytes the hash reads: every distinct parameter and buffer as stored (a quantized one's
    packed values and scales; an offloaded one's placeholder at its size, read from the disk)."""
    from nlgmetrics.engine.fingerprints import _readable_parts

    seen: dict[int, int] = {}
    for tensor in (*model.parameters(), *model.buffers()):
        if tensor.is_meta:
            seen[id(tensor)] = tensor.numel() * tensor.element_size()
        else:
            seen[id(tensor)] = sum(part.numel() * part.element_size() for part in _readable_parts(tensor, "")[0])
    return sum(seen.values()) / 1e6


def object_rows(path: Path, tokenizer: Any, gguf_dir: Path | None, offload: Path, repeats: int) -> list[dict[str, Any]]:
    from nlgmetrics.engine import load_lm
    from nlgmetrics.engine.fingerprints import module_fingerprint

    builders: dict[str, Callable[[], torch.nn.Module]] = {"plain float32": lambda: _plain(path)}
    try:
        import bitsandbytes  # noqa: F401

        builders["bitsandbytes 8-bit (CPU)"] = lambda: _bnb_8bit(path)
    except ImportError:
        pass
    try:
        import torchao  # noqa: F401

        builders["torchao int8 weight-only"] = lambda: _torchao_int8(path)
    except ImportError:
        pass
    builders["accelerate disk offload (all layers)"] = lambda: _disk_offloaded(path, offload)
    if gguf_dir is not None:
        builders["GGUF-dequantized folder, as an object"] = lambda: _plain(gguf_dir)
    models = {label: build() for label, build in builders.items()}
    calls: dict[str, Callable[[], Any]] = {}
    for label, model in models.items():
        load_lm(model, "causal", model_tokenizer=tokenizer, dtype=None)  # the first load prepares it
        calls[f"hash {label}"] = lambda m=model: module_fingerprint(m)
        calls[f"call {label}"] = lambda m=model: load_lm(m, "causal", model_tokenizer=tokenizer, dtype=None).fingerprint
    sides = interleaved(calls, repeats=repeats, clock=time.perf_counter)
    plain = sides["hash plain float32"].spread.median
    rows = []
    for label, model in models.items():
        hashed, call = sides[f"hash {label}"].spread, sides[f"call {label}"].spread
        rows.append({
            "model object": label, "MB hashed": round(_hashed_megabytes(model), 1),
            "hash s (median)": hashed.median, "hash s (range)": f"{hashed.low:.3f}-{hashed.high:.3f}",
            "load_lm per call s": call.median, "vs plain": f"{hashed.median / plain:.2f}x",
            "weights": sides[f"hash {label}"].value,
        })
    return rows


def named_rows(path: Path, alias: str | None, repeats: int) -> list[dict[str, Any]]:
    """A folder's first load in a process (tensors hashed once) and a later one (memoised)."""
    from nlgmetrics.engine import fingerprints, load_lm, release

    def first() -> str:
        fingerprints._LOADED.clear()  # as in a fresh process: nothing hashed yet
        release()
        return load_lm(str(path), "causal", device="cpu").fingerprint

    def again() -> str:
        release()  # the model is loaded again; its tensors' hash is recalled
        return load_lm(str(path), "causal", device="cpu").fingerprint

    def hash_only() -> str:
        return fingerprints.module_fingerprint(load_lm(str(path), "causal", device="cpu").model)

    calls = {"folder: first load in the process": first, "folder: a later load (memoised)": again,
             "folder: its tensors' hash alone": hash_only}
    if alias is not None:
        def by_alias() -> str:
            release()
            return load_lm(alias, "causal", device="cpu").fingerprint

        calls[f"{alias}: load (its GGUF's recorded sha256)"] = by_alias
    sides = interleaved(calls, repeats=repeats, clock=time.perf_counter)
    release()
    return [{"model by name": label, "s (median)": side.spread.median,
             "s (range)": f"{side.spread.low:.3f}-{side.spread.high:.3f}", "weights": side.value}
            for label, side in sides.items()]


def main(argv: list[str] | None = None) -> None:
    made = parser(__doc__, out=OUT)
    made.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    made.add_argument("--repeats", type=int, default=5)
    args = made.parse_args(argv)
    from transformers import AutoTokenizer

    scratch = Path(tempfile.mkdtemp(prefix="fingerprint_cost_"))
    try:
        if args.model == "smollm2":
            from nlgmetrics.engine.smollm2 import smollm2_dir

            path = gguf_dir = Path(smollm2_dir())
            alias: str | None = "smollm2-135m"
        else:
            path, gguf_dir, alias = _tiny_llama_dir(scratch / "tiny"), None, None
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        objects = object_rows(path, tokenizer, None if gguf_dir == path else gguf_dir, scratch / "offload",
                              args.repeats)
        if gguf_dir == path:  # the alias's folder is the plain row's checkpoint: the same tensors, the same hash
            objects[0]["model object"] += " (= the GGUF-dequantized alias folder)"
        named = named_rows(path, alias, args.repeats)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    command = command_line("benchmarks.studies.fingerprint_cost", argv)
    lines = report_head(
        "Fingerprint cost per call: quantized and offloaded model objects",
        "What hashing a model object's weights (`module_fingerprint`, on every call that passes the object) "
        f"costs for each kind of model, against the plain float32 one ({args.model}); wall-clock seconds, "
        f"median of {args.repeats} interleaved rounds after a warm-up; 1-minute load average at the end "
        f"{load_average():.2f}.", command, packages=("bitsandbytes", "torchao", "accelerate"))
    lines += ["", "## Model objects (hashed on every call)", "", *markdown_table(objects), "",
              "## Models passed by name (hashed once per process)", "", *markdown_table(named), "",
              "## Reading", "", *READING, ""]
    write_report(args.out, lines, {"command": command, "objects": objects, "named": named})
    print("\n".join(lines))


if __name__ == "__main__":
    main()
