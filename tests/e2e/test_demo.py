"""The demo functions behind each Gradio page (no browser): the numbers are the library's.

The browser tests (test_browser_demos.py) drive three demos end to end; here every demo is built
and the library call its button makes (``run_pair``) is checked for every metric, including the reference-free
ones, on the tiny fixture models.
"""

from __future__ import annotations

import pytest

from nlgmetrics.apps.demo import build_demo, run_pair, split_references
from nlgmetrics.registry import get_protocol, metric_names

DOCUMENT = "The storm closed the harbour on Monday. Boats stayed in port. Officials expect calm seas."
SUMMARY = "A storm closed the harbour."


def test_split_references():
    assert split_references("a\n---\nb\n  ---  \nc") == ["a", "b", "c"]
    assert split_references("line one\nline two") == ["line one\nline two"]
    assert split_references("") == [""]


def test_every_metric_has_a_demo():
    assert metric_names() == ["rouge_family", "bleu", "chrf", "ter", "infolm", "shannon_score", "blanc", "fflm"]
    for name in metric_names():
        demo = build_demo(name)
        ids = {getattr(block, "elem_id", None) for block in demo.blocks.values()}
        second = "reference" if get_protocol(name).second_input == "references" else "source"
        assert {"prediction", second, "submit", "score", "scores", "signature", "options"} <= ids, name


def test_reference_free_demos_equal_library(tiny_gpt2_dir, tiny_llama_dir, tiny_bert_dir):
    from nlgmetrics.blanc import blanc_help
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    got = run_pair(get_protocol("shannon_score"), SUMMARY, DOCUMENT, {"model": str(tiny_gpt2_dir)})
    want = shannon_score([SUMMARY], sources=[DOCUMENT], model=str(tiny_gpt2_dir), progress=False)
    assert got.main_score == want.scores["shannon_score"][0] and got.signature == want.signature
    assert got.aggregate()["ll_help"] == want.scores["ll_help"][0]
    assert got.aggregate() == want.aggregate()

    got = run_pair(get_protocol("fflm"), SUMMARY, DOCUMENT, {"model": str(tiny_llama_dir)})
    want = fflm([SUMMARY], sources=[DOCUMENT], model=str(tiny_llama_dir), progress=False)
    assert got.main_score == want.scores["fflm"][0] and got.signature == want.signature

    # through blanc(variant="help") in the demo, blanc_help directly here
    got = run_pair(get_protocol("blanc"), SUMMARY, DOCUMENT, {"model": str(tiny_bert_dir), "gap": 3})
    want = blanc_help([SUMMARY], sources=[DOCUMENT], model=str(tiny_bert_dir), gap=3, progress=False)
    assert got.main_score == want.scores["blanc"][0] and got.signature == want.signature
    assert "gap:3" in got.signature


def test_reference_demos_equal_library():
    from nlgmetrics.bleu import bleu
    from nlgmetrics.rouge import rouge_family

    got = run_pair(get_protocol("bleu"), "the cat sat", "the cat sat down\n---\na cat sat", {})
    want = bleu(["the cat sat"], [["the cat sat down", "a cat sat"]])
    assert got.main_score == want.main_score and got.aggregate() == want.aggregate()
    assert got.signature == want.signature
    got = run_pair(get_protocol("rouge_family"), "the cat sat", "a cat sat",
                   {"rouge_types": ["rouge2", "rouge1"], "n_bootstrap": 10})
    want = rouge_family(["the cat sat"], ["a cat sat"], rouge_types=["rouge2", "rouge1"], n_bootstrap=10)
    assert got.main_score == want.aggregate()["rouge2"] == 0.5  # the first requested type is the main score
    assert got.aggregate() == want.aggregate() and got.signature == want.signature


def test_option_widgets_start_at_the_library_defaults():
    """Each widget shows the default of the library function's signature (read here independently)."""
    import inspect

    from nlgmetrics.core.protocol import resolve

    for name in metric_names():
        spec = get_protocol(name)
        signatures = [inspect.signature(resolve(path)) for path in (spec.compute, *spec.forwards_to)]
        for option in spec.resolved_options():
            defaults = [sig.parameters[option.name].default for sig in signatures if option.name in sig.parameters]
            assert defaults, (name, option.name)
            assert option.default in defaults, (name, option.name, option.default, defaults)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="does not take"):
        run_pair(get_protocol("bleu"), "a", "b", {"temperature": 1.0})


@pytest.mark.slow
def test_space_app_py_serves_the_demo(metrics_dir):
    """`python app.py` in a metric folder (what a Space runs) serves the page and its API."""
    import json
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1",
               GRADIO_ANALYTICS_ENABLED="False")
    process = subprocess.Popen([sys.executable, "app.py"], cwd=metrics_dir / "bleu", env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5) as response:
                    config = json.loads(response.read())
                break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"app.py did not serve: {process.stdout.read()[-3000:]}")
                time.sleep(0.5)
        ids = {c.get("props", {}).get("elem_id") for c in config["components"]}
        assert {"prediction", "reference", "submit", "score", "signature"} <= ids
        assert config["title"] == "nlgmetrics: BLEU"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_infolm_widgets_leave_its_device_dependent_token_budget_alone(tiny_bert_dir):
    """InfoLM's token budget defaults to 2048 on CPU and 8192 on a GPU (infolm.default_token_budget);
    the demo passes only options that differ from the widget default, so that default must be None."""
    budgets = {name: get_protocol(name).option("token_budget").default
               for name in ("infolm", "shannon_score", "blanc", "fflm")}
    assert budgets == {"infolm": None, "shannon_score": 8192, "blanc": 8192, "fflm": 8192}

    # The None default reaches the library as "its own default" (2048 on this CPU).
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm import default_token_budget

    assert default_token_budget(load_lm(str(tiny_bert_dir)), budgets["infolm"]) == 2048


def test_widget_values_become_option_values():
    """Text boxes are typed like the command line: a digit string is a token id, lists are
    comma-separated; an empty box or widget is the library default."""
    from nlgmetrics.apps.demo import _coerce

    start = get_protocol("fflm").option("start_token")
    assert _coerce(start, "50256") == 50256 and _coerce(start, "<|endoftext|>") == "<|endoftext|>"
    assert _coerce(start, "") is start.default is None
    weights = get_protocol("fflm").option("weights")
    assert _coerce(weights, "0.5, 0.2,0.3") == [0.5, 0.2, 0.3]
    gap = get_protocol("blanc").option("gap")
    assert _coerce(gap, 3.0) == 3 and _coerce(gap, None) == gap.default
