"""The one way every LM metric enters the engine: its shared options checked, the model loaded,
the store opened, and the store closed however the call ends.

An entry point runs two steps around what is its own:

1. :func:`check_call_options` (no model needed): ``max_length``, ``token_budget``,
   ``batch_size``, ``chunk_size``, ``cache_dir`` and the model with its tokenizer, each refused
   with one wording for every metric. The metric's own checks follow, so that every wrong option
   is refused before any model loads.
2. ``with lm_call(options, ...) as call:`` opens the store, loads the model (transformers' own
   bars off with ``progress=False``), resolves the token budget and caps ``max_length`` at the
   model's context; the metric scores inside the block with ``call.lm``, ``call.store``,
   ``call.max_length``, ``call.token_budget``, ``call.batch_size``, ``call.chunk_size`` and
   ``call.progress``. The store is closed when the block ends, by an exception too.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> options = check_call_options(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"),
...                              max_length=10**6, token_budget=None, chunk_size=8)
>>> with lm_call(options, kind="causal", default_budget=8192, progress=False) as call:
...     call.lm.kind, call.max_length, call.token_budget, call.chunk_size
('causal', 256, 8192, 8)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.validation import (
    CHUNK_SIZE_RULE,
    check_cache_dir,
    check_engine_options,
    check_int,
    check_model_tokenizer,
    resolve_token_budget,
    shown_value,
)
from nlgmetrics.engine.budget import planned_budget
from nlgmetrics.engine.distributed import is_main_process
from nlgmetrics.engine.kinds import Kind
from nlgmetrics.engine.loading import LoadedLM, load_lm
from nlgmetrics.engine.store import Store
from nlgmetrics.engine.store_sharing import SharedStore, open_store
from nlgmetrics.engine.transformers_bars import transformers_bars_off

_ABSENT: Any = object()  # a metric without a ``chunk_size`` option


@dataclass(frozen=True)
class CallOptions:
    """The options every LM metric takes, checked (:func:`check_call_options`). ``load``: the
    keyword arguments :func:`~nlgmetrics.engine.load_lm` takes (tokenizer, revision, device,
    dtype, placement), passed on as they are; ``token_budget`` None: the metric's default, resolved
    once the model is loaded; ``chunk_size`` None: the metric takes none."""

    model: Any
    load: dict[str, Any]
    max_length: int | None = None
    token_budget: int | str | None = None
    batch_size: int | None = None
    chunk_size: int | None = None
    cache_dir: str | os.PathLike | None = None


def check_call_options(
    model: Any, *, model_tokenizer: Any = None, revision: str | None = None, device: Any = None,
    dtype: Any = None, device_map: str | dict[str, int | str] | None = None,
    max_memory: dict[int | str, int | str] | None = None, offload_folder: str | os.PathLike | None = None,
    max_length: Any = None, token_budget: Any = None, batch_size: Any = None, chunk_size: Any = _ABSENT,
    cache_dir: Any = None,
) -> CallOptions:
    """The shared options of an LM metric's call, checked before any model loads (leave
    ``chunk_size`` out for a metric without one). The placement options are checked by
    :func:`~nlgmetrics.engine.load_lm`, before it reads any weight.

    >>> check_call_options("gpt2", chunk_size=0)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `chunk_size` must be a positive integer (distinct texts or documents scored at a time: memory only, it does not change the numbers), got 0.
    """
    token_budget, batch_size, max_length = check_engine_options(token_budget, batch_size, max_length)
    if chunk_size is not _ABSENT:
        with CHUNK_SIZE_RULE.enforced():
            chunk_size = check_int("chunk_size", chunk_size, minimum=1, message=(
                f"`chunk_size` must be a positive integer (distinct texts or documents scored at a time: "
                f"memory only, it does not change the numbers), got {shown_value(chunk_size)}."))
    if isinstance(model, str) and not model.strip():
        raise ValueError("`model` is an empty string; pass a Hub id or a local model directory.")
    check_model_tokenizer(model, model_tokenizer)
    load = dict(model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype,
                device_map=device_map, max_memory=max_memory, offload_folder=offload_folder)
    return CallOptions(
        model=model, load=load, max_length=max_length, token_budget=token_budget, batch_size=batch_size,
        chunk_size=None if chunk_size is _ABSENT else chunk_size, cache_dir=check_cache_dir(cache_dir))


@dataclass(frozen=True)
class LMCall:
    """What a metric scores with inside :func:`lm_call`: the loaded model, the store (None: no
    store), the length limit applied (the model's context at most), the token budget resolved,
    the batch cap, the chunk size (None: the metric takes none) and whether to show the metric's
    progress bar (asked for, on the main process of a run)."""

    lm: LoadedLM
    store: Store | SharedStore | None
    max_length: int
    token_budget: int
    batch_size: int | None
    chunk_size: int | None
    progress: bool


@contextlib.contextmanager
def lm_call(
    options: CallOptions, *, kind: Kind | None, default_budget: int | Callable[[LoadedLM], int],
    default_max_length: int | None = None, progress: bool = True,
) -> Iterator[LMCall]:
    """Open the store, load the model of ``options`` as a ``kind`` LM (None: detected), and yield
    the :class:`LMCall`; close the store when the block ends, however it ends.

    ``default_budget``: the metric's budget for ``token_budget=None``, or a function of the loaded
    model giving it. ``default_max_length``: the metric's limit for ``max_length=None`` (None: the
    model's context); any limit is capped at the model's context. ``progress``: the metric's bar
    (:attr:`LMCall.progress`); False also keeps transformers' own bars off while the model loads.
    """
    store = open_store(options.cache_dir)
    try:
        with contextlib.nullcontext() if progress else transformers_bars_off():
            lm = load_lm(options.model, kind, **options.load)
        context = int(lm.max_length)  # the limit asked for (positive), else the metric's, at most this
        yield LMCall(
            lm=lm, store=store, max_length=min(options.max_length or default_max_length or context, context),
            # "auto" sized once, against the memory free when the call starts, so every pass of the
            # call is planned with one budget.
            token_budget=planned_budget(lm, resolve_token_budget(
                options.token_budget, default_budget(lm) if callable(default_budget) else default_budget)),
            batch_size=options.batch_size, chunk_size=options.chunk_size,
            progress=progress and is_main_process(),
        )
    except BaseException:
        # A run of several processes closes its store together (a collective): a process that
        # failed alone must not wait there for the others. Its spool file stays for the next call.
        if isinstance(store, Store):
            store.close()
        raise
    if store is not None:
        store.close()  # written through already; the file stays for the next call
