"""benchmarks/harness.py: the warm-up, the interleaved rounds, the numbers-agree check and the report
writer that every benchmark shares (expected values worked out by hand)."""

from __future__ import annotations

import doctest
import json
import math

import pytest

from benchmarks import harness


def test_the_docstring_examples_hold():
    assert doctest.testmod(harness).failed == 0


def _recorder(order: list[str]):
    def call(name: str):
        def run():
            order.append(name)
            return len(order)
        return run
    return call


def test_one_untimed_warm_up_then_rounds_in_alternating_order():
    order: list[str] = []
    call = _recorder(order)
    sides = harness.interleaved({"anchor": call("anchor"), "ours": call("ours")}, repeats=3)
    # warm-up anchor, ours; round 0 anchor first, round 1 ours first, round 2 anchor first
    assert order == ["anchor", "ours", "anchor", "ours", "ours", "anchor", "anchor", "ours"]
    assert len(sides["anchor"].seconds) == len(sides["ours"].seconds) == 3
    assert sides["anchor"].value == 7 and sides["ours"].value == 8  # each side's last call


def test_reset_runs_before_every_call_and_warm_up_can_be_left_out():
    order: list[str] = []
    call = _recorder(order)
    harness.compare(call("anchor"), call("ours"), repeats=2, warmup=False, reset=lambda: order.append("reset"))
    assert order == ["reset", "anchor", "reset", "ours", "reset", "ours", "reset", "anchor"]


def test_the_clock_is_read_around_each_timed_call_only():
    ticks = iter([0.0, 1.0, 10.0, 13.0, 20.0, 22.0, 30.0, 34.0])  # (start, end) of the 4 timed calls
    sides = harness.compare(lambda: "a", lambda: "o", repeats=2, clock=lambda: next(ticks))
    # round 0: anchor 1 s, ours 3 s; round 1 (ours first): ours 2 s, anchor 4 s
    assert sides.anchor.seconds == [1.0, 4.0] and sides.ours.seconds == [3.0, 2.0]
    assert sides.anchor.spread == harness.Spread(2.5, 1.0, 4.0)
    assert sides.ratio == pytest.approx(2.5 / 2.5)


def test_ratio_is_anchor_median_over_ours():
    sides = harness.Sides(harness.Side(None, [3.0, 1.0, 2.0]), harness.Side(None, [1.0, 2.0, 0.5]))
    assert sides.ratio == 2.0  # medians 2.0 and 1.0
    assert harness.Sides(harness.Side(None, [1.0]), harness.Side(None, [0.0])).ratio == math.inf


def test_agreement_is_relative_to_ours_and_counts_what_is_not_finite():
    # |1.0 - 1.1| = 0.1 <= 0 + 0.1 * 1.1; |2.0 - 2.5| = 0.5 > 0.1 * 2.5
    assert harness.agree([1.0], [1.1], rtol=0.1).within
    result = harness.agree([1.0, 2.0], [1.1, 2.5], rtol=0.1)
    assert not result.within and result.max_abs_diff == pytest.approx(0.5) and result.non_finite == 0
    result = harness.agree([math.inf, 1.0], [1.0, 1.0])
    assert math.isnan(result.max_abs_diff) and result.non_finite == 1 and not result.within
    with pytest.raises(ValueError):
        harness.agree([1.0], [1.0, 2.0])  # pairs, never a silently shorter comparison


def test_write_report_writes_the_markdown_and_its_json_beside_it(tmp_path):
    out = harness.write_report(tmp_path / "new" / "r.md", ["# R", "", "| a |"], {"command": "c", "rows": [{"a": 1}]})
    assert out.read_text() == "# R\n\n| a |\n"
    assert json.loads((tmp_path / "new" / "r.json").read_text()) == {"command": "c", "rows": [{"a": 1}]}
    harness.write_report(tmp_path / "s.md", "text\n")
    assert (tmp_path / "s.md").read_text() == "text\n" and not (tmp_path / "s.json").exists()


def test_the_report_head_names_command_machine_and_anchor_versions():
    head = harness.report_head("T", "What.", "python -m benchmarks.speed.text", packages=("sacrebleu",))
    assert head[:3] == ["# T", "", "What."]
    assert head[4] == "- command: `python -m benchmarks.speed.text`"
    assert head[5].startswith("- machine: ") and "logical CPUs" in head[5]
    assert head[6].startswith("- versions: python ") and "sacrebleu " in head[6]


def test_the_text_rows_keep_medians_ratio_and_spread():
    from benchmarks.speed.text import row

    sides = harness.Sides(harness.Side(None, [0.3, 0.1, 0.2]), harness.Side(None, [0.05, 0.1, 0.15]))
    assert row("m", "a", sides, 0.0) == {
        "metric": "m", "anchor": "a", "ours_s": 0.1, "anchor_s": 0.2, "ratio": 2.0,
        "ours_range": (0.05, 0.15), "anchor_range": (0.1, 0.3), "max_abs_diff": 0.0}
