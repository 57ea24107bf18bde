"""benchmarks/reproduce_scores.py: the check behind the results README's reproduction claim must
pass equal files, pass float32-sized differences, and fail a moved score or a second token flip."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.reproduce_scores import compare, main


def _write(folder: Path, name: str, scores: dict[str, dict[str, float]]) -> None:
    path = folder / "realsumm" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"options": {"family": "x"}}) + "\n" + json.dumps({"scores": scores}) + "\n")


def _pair(tmp_path: Path, old: dict, new: dict) -> tuple[Path, Path]:
    _write(tmp_path / "stored", "shannon-abc.jsonl", old)
    _write(tmp_path / "rerun", "shannon-abc.jsonl", new)
    return tmp_path / "rerun", tmp_path / "stored"


OLD = {"a": {"shannon_score": 0.2, "blanc_shannon": 0.1}, "b": {"shannon_score": -0.05, "blanc_shannon": 0.0}}


def test_equal_and_rounding_sized_differences_pass(tmp_path):
    new = {"a": {"shannon_score": 0.2 * (1 + 1e-6), "blanc_shannon": 0.1 + 1 / 1146},
           "b": {"shannon_score": -0.05, "blanc_shannon": 0.0}}
    rerun, stored = _pair(tmp_path, OLD, new)
    lines = compare(rerun, stored, rtol=2e-5, atol=1e-5, step=0.05, max_flips=1)
    assert all(line.startswith("ok") for line in lines) and len(lines) == 2
    assert "1 bit-identical" in lines[1] and main([str(rerun), str(stored)]) == 0


def test_a_moved_score_fails(tmp_path):
    new = {"a": {"shannon_score": 0.2 + 1e-4, "blanc_shannon": 0.1}, "b": OLD["b"]}
    rerun, stored = _pair(tmp_path, OLD, new)
    assert main([str(rerun), str(stored)]) == 1


def test_two_token_flips_or_a_big_step_fail(tmp_path):
    new = {"a": {"shannon_score": 0.2, "blanc_shannon": 0.1 + 0.001}, "b": {"shannon_score": -0.05, "blanc_shannon": 0.001}}
    rerun, stored = _pair(tmp_path, OLD, new)
    assert main([str(rerun), str(stored)]) == 1
    big = {"a": {"shannon_score": 0.2, "blanc_shannon": 0.3}, "b": OLD["b"]}
    rerun, stored = _pair(tmp_path / "big", OLD, big)
    assert main([str(rerun), str(stored)]) == 1


def test_no_partner_file_is_an_error(tmp_path):
    _write(tmp_path / "rerun", "fflm-zzz.jsonl", {"a": {"fflm": 0.1}})
    (tmp_path / "stored").mkdir()
    assert main([str(tmp_path / "rerun"), str(tmp_path / "stored")]) == 2
