"""transformers' own progress bars ("Loading weights", a sharded checkpoint's shards), off for the
length of a block: what ``progress=False`` of an LM metric asks for while the model loads.

transformers keeps one process-wide switch for its bars; a user who set it keeps it: the block
changes how bars are *made* while it runs and restores that afterwards. Blocks may overlap (two
threads loading at once): the bars stay off until the last of them ends, then the setting found
by the first is restored. huggingface_hub's download bars have a switch of their own, untouched.

>>> from transformers.utils import logging
>>> before = logging.is_progress_bar_enabled()
>>> with transformers_bars_off():
...     bar = logging.tqdm(range(3), desc="Loading weights")
>>> bar.disable, logging.is_progress_bar_enabled() == before
(True, True)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

_LOCK = threading.Lock()
_open_blocks = 0
_restore: Callable[[], None] | None = None


@contextlib.contextmanager
def transformers_bars_off() -> Iterator[None]:
    """Every progress bar transformers makes inside the block is made disabled (prints nothing)."""
    global _open_blocks, _restore
    with _LOCK:
        if _open_blocks == 0:
            _restore = _switch_off()
        _open_blocks += 1
    try:
        yield
    finally:
        with _LOCK:
            _open_blocks -= 1
            if _open_blocks == 0 and _restore is not None:
                _restore()
                _restore = None


def _switch_off() -> Callable[[], None]:
    """Turn transformers' bars off; return what turns them back to how they were."""
    from transformers.utils import logging

    set_hook = getattr(logging, "set_tqdm_hook", None)
    if set_hook is None:  # transformers < 5 has no hook: its module-level switch is all there is
        active = logging._tqdm_active
        logging._tqdm_active = False
        return lambda: setattr(logging, "_tqdm_active", active)

    def disabled(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        kwargs = {**kwargs, "disable": True}
        return previous(factory, args, kwargs) if previous is not None else factory(*args, **kwargs)

    # A hook, not the switch: transformers' disable_progress_bar() also turns off (and its enable
    # turns on) huggingface_hub's bars, which are the user's to set.
    previous = set_hook(disabled)
    return lambda: set_hook(previous)
