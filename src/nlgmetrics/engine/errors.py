"""The two errors :func:`nlgmetrics.engine.load_lm` raises for a model it cannot serve.

>>> issubclass(ModelNotFoundError, OSError), issubclass(ModelKindError, ValueError)
(True, True)
"""

from __future__ import annotations


class ModelNotFoundError(OSError):
    """The model cannot be read: neither a local directory, nor an alias, nor reachable on / cached
    from the Hub; or a directory that lacks (or holds truncated) weight or tokenizer files."""


class ModelKindError(ValueError):
    """The model cannot serve the requested kind (masked vs causal), or has no LM head at all."""
