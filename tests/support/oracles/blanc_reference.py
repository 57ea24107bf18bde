"""Import the reference implementation PyPI ``blanc`` 0.3.4 under transformers 5 (tests only).

blanc imports names that transformers 5 removed (AdamW, TransfoXL*, Reformer*, XLM*, ...).
Before importing it we add placeholders for the missing names to the ``transformers`` module;
blanc only *uses* the BERT/GPT-2 classes in our parity tests, so the placeholders are never
called. ``AdamW`` maps to ``torch.optim.AdamW`` (BlancTune uses it; same update rule).
"""

from __future__ import annotations

import sys
import types

import torch
import transformers

_REMOVED_NAMES = [
    "OpenAIGPTLMHeadModel", "OpenAIGPTTokenizer", "XLNetLMHeadModel", "XLNetTokenizer",
    "TransfoXLLMHeadModel", "TransfoXLTokenizer", "ReformerModelWithLMHead", "ReformerTokenizer",
    "XLMWithLMHeadModel", "XLMTokenizer",
]


def _placeholder(name: str) -> type:
    def _fail(*args, **kwargs):
        raise RuntimeError(f"transformers.{name} is a test placeholder (removed in transformers 5)")

    return type(name, (), {"__init__": _fail, "from_pretrained": staticmethod(_fail)})


def _install_shim() -> None:
    # Touch the classes blanc really uses first: resolving some lazy names makes transformers
    # replace its module object in sys.modules, which would drop attributes set before.
    for name in ("BertForMaskedLM", "BertTokenizer", "GPT2LMHeadModel", "GPT2Tokenizer",
                 "AlbertForMaskedLM", "AlbertTokenizer", "BertModel"):
        getattr(transformers, name)
    module = sys.modules["transformers"]
    if not hasattr(module, "AdamW"):
        module.AdamW = torch.optim.AdamW
    for name in _REMOVED_NAMES:
        try:
            getattr(module, name)
        except (AttributeError, ImportError):
            setattr(module, name, _placeholder(name))


def import_blanc() -> types.ModuleType:
    """Return the ``blanc`` package, importable under transformers 5."""
    _install_shim()
    import blanc

    return blanc
