"""Input checks shared by every metric: clear errors that name the problem and the fix.

Nothing here mutates what the user passed: lists are copied into new tuples/lists.

>>> as_texts("predictions", ["a", "b"])
['a', 'b']
>>> check_reference_inputs(["x", "y"], ["a", ["b", "c"]])
(['x', 'y'], [['a'], ['b', 'c']])

Scalar options (:func:`check_int`, :func:`check_real`, :func:`check_bool`) accept numpy scalars
(an ``np.int64`` read from a config array, an ``np.float32`` from a sweep) like the Python ones,
and return the plain Python value, so results and signatures do not depend on where a number
came from.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence, Set
from typing import Any

import numpy as np

from nlgmetrics.core.refusals import BEFORE_LOADING, Refusal


def shown_value(value: Any, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters; an integer of more than
    about 60 digits is described by its size (Python refuses to print more than 4300 digits, and
    a message need not).

    >>> shown_value(12), shown_value("x" * 100)[-5:], shown_value(-10**5000)
    ('12', 'xx...', 'a negative integer of about 5001 digits')
    """
    if isinstance(value, numbers.Integral) and not _is_bool(value) and abs(int(value)).bit_length() > 200:
        digits = int(abs(int(value)).bit_length() * math.log10(2)) + 1
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits} digits"
    try:
        text = repr(value)
    except ValueError:  # a container holding such an integer
        return f"a {type(value).__name__} holding a number too long to print"
    return text if len(text) <= limit else text[:limit] + "..."


def _reject_unordered(name: str, values: Any) -> None:
    """A set has no order (rows would be silently misaligned with the other argument) and a dict
    iterates over its keys: neither is a list of examples."""
    if isinstance(values, (Set, Mapping)):
        kind = "dict" if isinstance(values, Mapping) else "set"
        raise ValueError(
            f"`{name}` is a {kind} ({type(values).__name__}); pass a list with one item per example, "
            f"in the same order as the other argument."
        )


def check_text(label: str, text: Any) -> str:
    """Check one text (a ``str`` of valid Unicode); ``label`` names it in the error. Lone surrogates
    (e.g. from ``errors="surrogateescape"`` or a JSON ``"\\udc80"``) are refused: they are not
    valid Unicode, and tokenizers fail on them with a bare TypeError.

    >>> check_text("prediction", "a cat")
    'a cat'
    >>> check_text("predictions[1]", 3)
    Traceback (most recent call last):
    ...
    ValueError: `predictions[1]` is int (3), not a string; convert every item to str (use '' for a missing text).
    """
    if not isinstance(text, str):
        raise ValueError(
            f"`{label}` is {type(text).__name__} ({text!r:.40}), not a string; "
            f"convert every item to str (use '' for a missing text)."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"`{label}` contains a lone surrogate {text[error.start]!r} at position {error.start}, "
            f"which is not valid Unicode; decode your data with errors='replace' (or fix the bytes)."
        ) from None
    return text


def as_texts(name: str, values: Any, *, allow_empty_list: bool = False) -> list[str]:
    """Check that ``values`` is a list of strings; return a new list.

    Raises ValueError naming the argument, the offending index and how to fix it.
    """
    if values is None:
        raise ValueError(f"`{name}` is None; pass a list of strings (one per example).")
    if isinstance(values, str):
        raise ValueError(
            f"`{name}` is a single string; pass a list of strings, e.g. {name}=[{values[:30]!r}]."
        )
    _reject_unordered(name, values)
    if not isinstance(values, Sequence) and not hasattr(values, "__iter__"):
        raise ValueError(f"`{name}` must be a list of strings, got {type(values).__name__}.")
    texts = list(values)
    if not texts and not allow_empty_list:
        raise ValueError(f"`{name}` is empty; pass at least one example.")
    for index, text in enumerate(texts):
        check_text(f"{name}[{index}]", text)
    return texts


def check_reference_inputs(predictions: Any, references: Any) -> tuple[list[str], list[list[str]]]:
    """The inputs of a reference-based metric, checked: the predictions and, per prediction, its
    non-empty list of references (ragged allowed): each item of ``references`` is a string (one
    reference) or a list of strings (several references).

    >>> check_reference_inputs(["a cat", "a cow"], ["a dog", ["a pig", "a hen"]])
    (['a cat', 'a cow'], [['a dog'], ['a pig', 'a hen']])
    """
    preds = as_texts("predictions", predictions)
    if references is None:
        raise ValueError("`references` is None; pass one reference (or a list of references) per example.")
    if isinstance(references, str):
        raise ValueError("`references` is a single string; pass a list with one item per example.")
    _reject_unordered("references", references)
    items = list(references)
    if len(items) != len(preds):
        raise ValueError(
            f"`references` has {len(items)} items but there are {len(preds)} predictions; "
            f"pass exactly one reference or list of references per prediction."
        )
    normalised: list[list[str]] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            normalised.append([check_text(f"references[{index}]", item)])
            continue
        if not isinstance(item, (list, tuple)):
            raise ValueError(
                f"`references[{index}]` is {type(item).__name__}; each item must be a string or a list "
                f"of strings (several references for one prediction)."
            )
        if not item:
            raise ValueError(f"`references[{index}]` is an empty list; give at least one reference.")
        for j, ref in enumerate(item):
            if not isinstance(ref, str):
                hint = " (references nested too deeply?)" if isinstance(ref, (list, tuple)) else ""
                raise ValueError(
                    f"`references[{index}][{j}]` is {type(ref).__name__}, not a string{hint}; "
                    f"pass references as a list of strings per prediction."
                )
            check_text(f"references[{index}][{j}]", ref)
        normalised.append(list(item))
    return preds, normalised


def check_source_inputs(predictions: Any, sources: Any) -> tuple[list[str], list[str]]:
    """The inputs of a reference-free metric, checked: the predictions and their sources, lists of
    strings of one length.

    >>> check_source_inputs(["a summary"], ["a document"])
    (['a summary'], ['a document'])
    """
    preds = as_texts("predictions", predictions)
    docs = as_texts("sources", sources)
    if len(preds) != len(docs):
        raise ValueError(f"Mismatched lengths (predictions={len(preds)}, sources={len(docs)}); pass one item "
                         f"per example in each argument.")
    return preds, docs


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Reject an unknown option value, listing the valid ones."""
    if value not in choices:
        raise ValueError(f"Unknown {name}={shown_value(value)}; choose one of {list(choices)}.")
    return value


# ------------------------------------------------------------------------------------------------
# scalar options


def _is_bool(value: Any) -> bool:
    # np.bool_ is neither a bool nor a numbers.Integral, but it is a truth value all the same.
    return isinstance(value, (bool, np.bool_))


def _int_requirement(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer between {minimum} and {maximum}"
    if minimum is not None:
        return {1: "a positive integer", 0: "a non-negative integer"}.get(minimum, f"an integer >= {minimum}")
    return "an integer" if maximum is None else f"an integer <= {maximum}"


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_none: bool = False,
    message: str | None = None,
) -> int | None:
    """Check an integer option (Python or numpy integer, never a bool); return it as a plain ``int``.

    ``minimum`` / ``maximum`` are inclusive bounds. ``message`` replaces the default error text
    (metrics keep their documented wording).

    >>> check_int("gap", np.int64(3), minimum=1), type(check_int("gap", np.int64(3)))
    (3, <class 'int'>)
    >>> check_int("batch_size", None, minimum=1, allow_none=True) is None
    True
    >>> check_int("gap", True, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: `gap` must be a positive integer, got True.
    >>> check_int("gap", 2.0, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: `gap` must be a positive integer, got 2.0.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        value = int(value)
        if (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
            return value
    raise ValueError(message if message is not None else (
        f"`{name}` must be {_int_requirement(minimum, maximum)}{' or None' if allow_none else ''}, "
        f"got {shown_value(value)}."))


def check_digits(digits: str, *, minimum: int = 0, maximum: int, message: str) -> int:
    """The integer that ASCII decimal ``digits`` write (an option spelled inside a name, as the 4 of
    ``rougeSU4``, matched by the caller's ``[0-9]+``), checked to lie in ``[minimum, maximum]``.

    The number of significant digits is compared with ``maximum``'s before converting: ``int()``
    of thousands of digits is slow, and beyond 4300 digits Python refuses it with a message about
    its own limit instead of the option's. ``message``'s ``{shown}`` is replaced by ``digits`` as
    written when short, else by its first ten digits and its length.

    >>> check_digits("004", maximum=10, message="gap {shown}")
    4
    >>> check_digits("9" * 5000, maximum=10, message="`gap` is {shown}; it must be at most 10.")
    Traceback (most recent call last):
    ...
    ValueError: `gap` is 9999999999... (5000 digits); it must be at most 10.
    """
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(maximum)) or not minimum <= int(significant) <= maximum:
        shown = digits if len(digits) <= 30 else f"{digits[:10]}... ({len(digits)} digits)"
        raise ValueError(message.replace("{shown}", shown))
    return int(significant)


def check_real(
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    allow_none: bool = False,
    finite: bool = True,
    message: str,
) -> float | None:
    """Check a real-number option (Python or numpy int/float, never a bool; NaN and infinities
    rejected unless ``finite=False``); return it as a plain ``float``.

    ``minimum`` is inclusive unless ``exclusive_minimum``; ``maximum`` is inclusive. ``message`` is
    the error text: every metric words its own (the value, the range, a typical setting).

    >>> check_real(np.float32(0.5), minimum=0, exclusive_minimum=True, message="no")
    0.5
    >>> check_real(2, minimum=0, exclusive_minimum=True, message="no")
    2.0
    >>> check_real(float("nan"), minimum=0, maximum=1, message="`p_mask` must be in [0, 1].")
    Traceback (most recent call last):
    ...
    ValueError: `p_mask` must be in [0, 1].
    >>> check_real("1", minimum=0, exclusive_minimum=True, message="`beta` must be a number > 0.")
    Traceback (most recent call last):
    ...
    ValueError: `beta` must be a number > 0.
    """
    if value is None and allow_none:
        return None
    if not isinstance(value, numbers.Real) or _is_bool(value):
        raise ValueError(message)
    try:
        value = float(value)
    except OverflowError:  # an integer beyond float64 (more than 309 digits)
        raise ValueError(message) from None
    if not ((math.isfinite(value) or not finite)
            and (minimum is None or (value > minimum if exclusive_minimum else value >= minimum))
            and (maximum is None or value <= maximum)):
        raise ValueError(message)
    return value


def check_bool(name: str, value: Any, *, message: str | None = None) -> bool:
    """Check a switch (``True``/``False`` or a numpy bool); return a plain ``bool``.

    ``1``, ``"yes"`` or ``"no"`` are rejected: ``bool("no")`` is True, so a string would silently
    turn the option on.

    >>> check_bool("lowercase", np.bool_(True))
    True
    >>> check_bool("lowercase", "no")
    Traceback (most recent call last):
    ...
    ValueError: `lowercase` must be True or False, got 'no'.
    """
    if not _is_bool(value):
        raise ValueError(message if message is not None else f"`{name}` must be True or False, got {shown_value(value)}.")
    return bool(value)


def check_confidence(confidence: Any) -> float:
    """The level of a confidence interval as a plain float strictly between 0 and 1 (numpy
    scalars converted), else a ValueError; a percentage such as 95 is the common slip.

    >>> check_confidence(np.float64(0.9))
    0.9
    >>> check_confidence(95)
    Traceback (most recent call last):
    ...
    ValueError: confidence=95 must be a number strictly between 0 and 1 (a fraction: 0.95 for a 95% interval).
    """
    message = (f"confidence={shown_value(confidence)} must be a number strictly between 0 and 1 "
               f"(a fraction: 0.95 for a 95% interval).")
    value = check_real(confidence, minimum=0, exclusive_minimum=True, maximum=1, message=message)
    if value == 1:  # check_real's maximum is inclusive; a 100% interval has no finite bounds
        raise ValueError(message)
    return value


# ------------------------------------------------------------------------------------------------
# the options every LM metric shares

#: ``token_budget=None`` means, for every LM metric, the metric's default budget (the same as
#: leaving the option out; see :func:`resolve_token_budget`), and ``"auto"`` the largest budget
#: that fits the memory free when the call starts (:mod:`nlgmetrics.engine.budget`): the budget
#: only sets how many padded tokens go into one forward pass, so no float32 number depends on it
#: (in half precision the batching can move the last bits) and no signature records it.
AUTO_TOKEN_BUDGET = "auto"
TOKEN_BUDGET_RULE = Refusal(
    ("token_budget",), "a `token_budget` that is not a positive integer, 'auto' or None",
    "it is a count of padded tokens per forward pass ('auto': the largest that fits the free memory; "
    "None: the metric's default)")
BATCH_SIZE_RULE = Refusal(
    ("batch_size",), "a `batch_size` that is not a positive integer or None",
    "it is a count of sequences per forward pass (None: no cap besides the token budget)")
MAX_LENGTH_RULE = Refusal(
    ("max_length",), "a `max_length` that is not a positive integer or None",
    "it is a count of tokens per sequence (None: the model's context)")
CHUNK_SIZE_RULE = Refusal(
    ("chunk_size",), "a `chunk_size` that is not a positive integer",
    "it is a count of texts or documents held in memory at once")
#: ``cache_dir`` names the folder of the engine's store (:mod:`nlgmetrics.engine.store`); any other
#: type would fail deep in ``os.fspath`` with a message that does not name the option.
CACHE_DIR_RULE = Refusal(
    ("cache_dir",), "a `cache_dir` that is not a folder path (a str or os.PathLike) or None",
    "it names the folder of the store that keeps what the model computed (None: $NLGMETRICS_CACHE_DIR, "
    "else no store)")


def switch_rule(*names: str, stage: str = BEFORE_LOADING) -> Refusal:
    """The rule of a metric's switches ``names`` (checked by :func:`check_switches`): every metric
    declares its own with this one wording, differing only in the names and ``stage``.

    >>> switch_rule("lowercase", "force").sentence()
    "Refused: a switch (`lowercase`, `force`) that is not True or False, because a string such as 'no' would silently turn it on; checked before any model loads."
    """
    listed = ", ".join(f"`{name}`" for name in names)
    return Refusal(names, f"a switch ({listed}) that is not True or False",
                   "a string such as 'no' would silently turn it on", stage)


#: Largest seed: torch.manual_seed takes at most 2**64 - 1 (beyond, "Overflow when unpacking
#: long long"); numpy's default_rng takes none below 0.
MAX_SEED = 2**64 - 1


def seed_rule(*, allow_none: bool = False, stage: str = BEFORE_LOADING) -> Refusal:
    """The rule of a metric's ``seed`` (checked by :func:`check_seed`): one range for every metric;
    ``allow_none`` where None means unseeded.

    >>> seed_rule(allow_none=True).refused
    'a `seed` that is not an integer between 0 and 2**64 - 1 (18446744073709551615) or None'
    """
    return Refusal(("seed",), f"a `seed` that is not an integer between 0 and 2**64 - 1 ({MAX_SEED})"
                   f"{' or None' if allow_none else ''}",
                   "torch's generator takes no larger seed and numpy's no negative one", stage)


#: The seed rule of the metrics whose seed must be given (BLANC-tune's).
SEED_RULE = seed_rule()


def check_engine_options(
    token_budget: Any, batch_size: Any, max_length: Any = None
) -> tuple[int | str | None, int | None, int | None]:
    """``(token_budget, batch_size, max_length)`` as plain ints or None (numpy ints accepted, bools
    and floats refused), ``token_budget`` also ``"auto"``. None means: ``token_budget``, the
    metric's default budget (every LM metric alike: :func:`resolve_token_budget`); ``batch_size``,
    no cap; ``max_length``, the model's context.

    >>> check_engine_options(np.int64(4096), None, 512), check_engine_options("auto", None)
    ((4096, None, 512), ('auto', None, None))
    >>> check_engine_options(None, None)
    (None, None, None)
    >>> check_engine_options(0, None)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `token_budget` must be a positive integer, 'auto' or None (padded tokens per forward pass, e.g. 8192; 'auto': the largest that fits the free memory; None: the metric's default; it does not change the numbers), got 0.
    """
    with TOKEN_BUDGET_RULE.enforced():
        budget: int | str | None = AUTO_TOKEN_BUDGET
        if not (isinstance(token_budget, str) and token_budget == AUTO_TOKEN_BUDGET):
            budget = check_int("token_budget", token_budget, minimum=1, allow_none=True, message=(
                f"`token_budget` must be a positive integer, 'auto' or None (padded tokens per forward pass, "
                f"e.g. 8192; 'auto': the largest that fits the free memory; None: the metric's default; it "
                f"does not change the numbers), got {shown_value(token_budget)}."))
    with BATCH_SIZE_RULE.enforced():
        batch = check_int("batch_size", batch_size, minimum=1, allow_none=True, message=(
            f"`batch_size` must be a positive integer or None (sequences per forward pass; it does not "
            f"change the numbers), got {shown_value(batch_size)}."))
    with MAX_LENGTH_RULE.enforced():
        length = check_int("max_length", max_length, minimum=1, allow_none=True, message=(
            f"`max_length` must be a positive integer or None (tokens per sequence; None: the model's "
            f"context), got {shown_value(max_length)}."))
    return budget, batch, length


def resolve_token_budget(token_budget: int | str | None, default: int) -> int | str:
    """The budget to run with: ``token_budget`` as :func:`check_engine_options` returned it, None
    replaced by the metric's ``default``; ``"auto"`` is kept for the engine, which sizes it
    against the loaded model and the free memory (:func:`nlgmetrics.engine.budget.planned_budget`).

    >>> resolve_token_budget(None, 8192), resolve_token_budget(64, 8192), resolve_token_budget("auto", 8192)
    (8192, 64, 'auto')
    """
    return default if token_budget is None else token_budget


def check_model_tokenizer(model: Any, model_tokenizer: Any) -> None:
    """Refuse a model *instance* (a ``torch.nn.Module``) given without ``model_tokenizer``: an
    instance does not carry its tokenizer, and every LM metric names the option this way (the
    engine's loader calls it ``tokenizer``). Names, directories and loaded models carry theirs.

    >>> class Module:  # what matters is a module's parameters(), not its class
    ...     def parameters(self): return iter(())
    >>> check_model_tokenizer("gpt2", None)
    >>> check_model_tokenizer(Module(), None)
    Traceback (most recent call last):
    ...
    ValueError: model is a Module instance, which does not carry its tokenizer; pass model_tokenizer=<its tokenizer> (e.g. AutoTokenizer.from_pretrained(<its checkpoint>)).
    """
    is_instance = not isinstance(model, str) and callable(getattr(model, "parameters", None))
    if is_instance and model_tokenizer is None:
        raise ValueError(
            f"model is a {type(model).__name__} instance, which does not carry its tokenizer; pass "
            f"model_tokenizer=<its tokenizer> (e.g. AutoTokenizer.from_pretrained(<its checkpoint>)).")


def check_switches(rule: Refusal, /, **switches: Any) -> dict[str, bool]:
    """Every named switch checked by :func:`check_bool` under ``rule`` (the metric's
    :func:`switch_rule`); returned as plain bools, in the given order. Every metric's switches are
    refused with this one message.

    >>> check_switches(switch_rule("progress", "explain"), progress=np.bool_(False), explain=True)
    {'progress': False, 'explain': True}
    >>> check_switches(switch_rule("lowercase"), lowercase="no")
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `lowercase` must be True or False, got 'no'.
    """
    with rule.enforced():
        return {name: check_bool(name, value) for name, value in switches.items()}


def check_seed(seed: Any, *, name: str = "seed", allow_none: bool = False, rule: Refusal = SEED_RULE) -> int | None:
    """A random seed every generator the library seeds takes: an integer (numpy ints accepted) in
    ``[0, MAX_SEED]``; None only with ``allow_none`` (unseeded). Refused under ``rule`` (the
    metric's :func:`seed_rule`), with one message for every metric.

    >>> check_seed(np.int64(7)), check_seed(None, allow_none=True)
    (7, None)
    >>> check_seed(2**70)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `seed` must be an integer between 0 and 2**64 - 1, got 1180591620717411303424 (torch's generator takes no larger seed and numpy's no negative one).
    >>> check_seed(-10**5000)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `seed` must be an integer between 0 and 2**64 - 1, got a negative integer of about 5001 digits (torch's generator takes no larger seed and numpy's no negative one).
    """
    with rule.enforced():
        return check_int(name, seed, minimum=0, maximum=MAX_SEED, allow_none=allow_none, message=(
            f"`{name}` must be an integer between 0 and 2**64 - 1{' or None' if allow_none else ''}, "
            f"got {shown_value(seed)} (torch's generator takes no larger seed and numpy's no negative one)."))


def check_cache_dir(cache_dir: Any) -> str | os.PathLike[str] | None:
    """``cache_dir`` as given when it can name a store folder: None (``$NLGMETRICS_CACHE_DIR``, else
    no store), a ``str`` (``""``: no store) or an ``os.PathLike`` of a ``str``; anything else is
    refused under :data:`CACHE_DIR_RULE`, naming the option, before any model loads.

    >>> from pathlib import Path
    >>> check_cache_dir(None), check_cache_dir("runs/store"), check_cache_dir(Path("runs"))
    (None, 'runs/store', PosixPath('runs'))
    >>> check_cache_dir(5)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `cache_dir` must be a folder path (a str or os.PathLike) or None, got 5 (int); pass e.g. cache_dir="~/.cache/nlgmetrics-store", or None for $NLGMETRICS_CACHE_DIR.
    """
    if cache_dir is None or isinstance(cache_dir, str) or (
            isinstance(cache_dir, os.PathLike) and isinstance(os.fspath(cache_dir), str)):
        return cache_dir
    raise CACHE_DIR_RULE.error(
        f"`cache_dir` must be a folder path (a str or os.PathLike) or None, got {shown_value(cache_dir)} "
        f"({type(cache_dir).__name__}); pass e.g. cache_dir=\"~/.cache/nlgmetrics-store\", or None for "
        f"$NLGMETRICS_CACHE_DIR.")
