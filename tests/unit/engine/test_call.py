"""The one call path of the LM metrics (:mod:`nlgmetrics.engine.call`).

- the store is closed however a call ends: a failure while scoring or while loading the model
  must not leave its sqlite connection open;
- one wording per shared rule: ``chunk_size`` is refused with the same message by every metric;
- every option, shared or the metric's own, is refused before any model loads;
- ``progress=False`` silences transformers' "Loading weights" bar too, and leaves transformers'
  own setting as it found it (overlapping loads included).

Fast: tiny random models, a few calls each.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from transformers.utils import logging as transformers_logging

import nlgmetrics.engine.call as call_module
import nlgmetrics.engine.store as store_module
from nlgmetrics.blanc import blanc_help, blanc_tune
from nlgmetrics.core.refusals import OptionError
from nlgmetrics.core.validation import CHUNK_SIZE_RULE
from nlgmetrics.engine.transformers_bars import transformers_bars_off
from nlgmetrics.fflm import fflm
from nlgmetrics.infolm import infolm
from nlgmetrics.shannon import shannon_score
from nlgmetrics.testing import build_random_model

SUMMARY, DOCUMENT = "Jack bought milk.", "Jack drove to the bazaar. He bought milk."


class Boom(RuntimeError):
    """Raised from inside a metric's scoring."""


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise Boom("scoring failed")


@pytest.fixture
def stores(monkeypatch) -> dict[str, list]:
    """Every store a call opens, and every one it closes (wrapping the class: any code path)."""
    seen: dict[str, list] = {"opened": [], "closed": []}
    init, close = store_module.Store.__init__, store_module.Store.close

    def opening(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen["opened"].append(self)

    def closing(self):
        seen["closed"].append(self)
        close(self)

    monkeypatch.setattr(store_module.Store, "__init__", opening)
    monkeypatch.setattr(store_module.Store, "close", closing)
    return seen


#: Per metric: the call, the model fixture it needs, and the scoring step to break (a name in the
#: metric's module, looked up when the call runs).
FAILING = {
    "shannon": (shannon_score, "tiny_gpt2_dir", "nlgmetrics.shannon.api.score_chunk"),
    "fflm": (fflm, "tiny_llama_dir", "nlgmetrics.fflm.api.build_queries"),
    "infolm": (infolm, "tiny_bert_dir", "nlgmetrics.infolm.api.score_examples"),
    "blanc_help": (blanc_help, "tiny_bert_dir", "nlgmetrics.blanc.help.run_queries"),
    "blanc_tune": (blanc_tune, "tiny_bert_dir", "nlgmetrics.blanc.tune.run_queries"),
}


@pytest.mark.parametrize("name", FAILING)
def test_the_store_is_closed_when_scoring_fails(name, stores, monkeypatch, tmp_path, request):
    metric, model_fixture, step = FAILING[name]
    model = str(request.getfixturevalue(model_fixture))
    monkeypatch.setattr(step, _raise)
    with pytest.raises(Boom):
        metric([SUMMARY], [DOCUMENT], model=model, cache_dir=tmp_path / "store", progress=False)
    assert len(stores["opened"]) == 1
    assert stores["closed"] == stores["opened"]


@pytest.mark.parametrize("name", FAILING)
def test_the_store_is_closed_when_the_model_fails_to_load(name, stores, tmp_path):
    metric = FAILING[name][0]
    with pytest.raises(OSError):
        metric([SUMMARY], [DOCUMENT], model=str(tmp_path / "no-such-model"), cache_dir=tmp_path / "store",
               progress=False)
    assert len(stores["opened"]) == 1
    assert stores["closed"] == stores["opened"]


def test_the_store_is_closed_when_the_call_succeeds(stores, tiny_gpt2_dir, tmp_path):
    shannon_score([SUMMARY], [DOCUMENT], model=str(tiny_gpt2_dir), cache_dir=tmp_path, progress=False)
    assert len(stores["opened"]) == 1 and stores["closed"] == stores["opened"]


@pytest.mark.parametrize("chunk_size", [0, 2.5, "64", True])
def test_every_metric_refuses_a_chunk_size_in_one_wording(chunk_size):
    messages = set()
    for metric in (shannon_score, fflm, infolm):
        with pytest.raises(OptionError) as refused:
            metric([SUMMARY], [DOCUMENT], model="no-such-org/no-such-model", chunk_size=chunk_size, progress=False)
        assert refused.value.refusal is CHUNK_SIZE_RULE
        messages.add(str(refused.value))
    assert len(messages) == 1, messages
    assert messages.pop().startswith("`chunk_size` must be a positive integer (")


#: Per metric, options refused before any model loads: the shared ones and the metric's own.
REFUSED_BEFORE_LOADING = {
    shannon_score: [dict(token_budget=0), dict(cache_dir=5), dict(max_length=2), dict(num_upstream=-1),
                    dict(start_token=1.5), dict(model="")],
    fflm: [dict(batch_size=0), dict(chunk_size=0), dict(weights=(1, 0)), dict(separator=3), dict(explain="no")],
    infolm: [dict(max_length="512"), dict(temperature=0), dict(model_kind="seq2seq"), dict(idf="yes")],
    blanc_help: [dict(token_budget=1.5), dict(max_length=2), dict(measure="best"), dict(filler_token=1)],
    blanc_tune: [dict(cache_dir=b"x"), dict(seed=-1), dict(finetune_epochs=-1), dict(progress="no")],
}


@pytest.mark.parametrize("metric, options", [(metric, options) for metric, cases in REFUSED_BEFORE_LOADING.items()
                                             for options in cases])
def test_options_are_refused_before_the_model_loads(metric, options, monkeypatch):
    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded before the options were checked")

    monkeypatch.setattr(call_module, "load_lm", no_load)
    with pytest.raises(ValueError):
        metric([SUMMARY], [DOCUMENT], **{"model": "no-such-org/no-such-model", "progress": False, **options})


@pytest.fixture
def bars_on():
    """transformers' bars on for the test (as they are by default), the setting restored after."""
    was_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.enable_progress_bar()
    yield
    (transformers_logging.enable_progress_bar if was_on else transformers_logging.disable_progress_bar)()


def _loading_output(capsys, metric, kind: str, folder, progress: bool) -> str:
    """stderr of a call whose model loads afresh (a new folder: the in-process cache has not seen it)."""
    model = str(build_random_model(kind, folder, size="tiny"))
    capsys.readouterr()
    metric([SUMMARY], [DOCUMENT], model=model, progress=progress)
    return capsys.readouterr().err


def _transformers_bar_is_on() -> bool:
    bar = transformers_logging.tqdm(range(1), file=sys.stderr)
    on = not bar.disable
    bar.close()
    return on


@pytest.mark.parametrize("metric, kind", [(shannon_score, "gpt2"), (blanc_help, "bert")])
def test_progress_false_silences_the_loading_bar_and_restores_the_setting(metric, kind, bars_on, capsys, tmp_path):
    # The check can fail: transformers shows the bar for a tiny model when the metric's bar is on.
    assert "Loading weights" in _loading_output(capsys, metric, kind, tmp_path / "shown", progress=True)
    assert "Loading weights" not in _loading_output(capsys, metric, kind, tmp_path / "silent", progress=False)
    assert transformers_logging.is_progress_bar_enabled() and _transformers_bar_is_on()


def test_a_failed_load_restores_transformers_bars(bars_on, tmp_path):
    with pytest.raises(OSError):
        shannon_score([SUMMARY], [DOCUMENT], model=str(tmp_path / "no-such-model"), progress=False)
    assert _transformers_bar_is_on()


def test_a_user_who_turned_transformers_bars_off_keeps_them_off(bars_on, capsys, tmp_path):
    transformers_logging.disable_progress_bar()
    assert "Loading weights" not in _loading_output(capsys, shannon_score, "gpt2", tmp_path / "a", progress=True)
    assert "Loading weights" not in _loading_output(capsys, shannon_score, "gpt2", tmp_path / "b", progress=False)
    assert not transformers_logging.is_progress_bar_enabled() and not _transformers_bar_is_on()


def test_overlapping_silent_loads_restore_the_setting_when_the_last_ends(bars_on):
    """Two loads in two threads may overlap: the first to end must not turn the bars back on under
    the second, and the last must restore them (the order of the exits of interleaved threads)."""
    first, second = transformers_bars_off(), transformers_bars_off()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not _transformers_bar_is_on()
    second.__exit__(None, None, None)
    assert _transformers_bar_is_on()
