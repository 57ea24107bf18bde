"""What a metric refuses and why, as data: one :class:`Refusal` per rule, raised by the check that
enforces it and listed, as plain sentences, for the model cards (:func:`refusal_sentences`).

A check refuses a value by raising :class:`OptionError` (a ``ValueError``) that carries its
:class:`Refusal`, either directly (``raise RULE.error(message)``) or by wrapping a generic check
(``with RULE.enforced(): check_int(...)``). Each LM metric's package lists the rules its checks
use (e.g. :func:`nlgmetrics.infolm.refusals`), and the tests make every listed rule fire on a
probe input and every refused option carry a listed rule: the list and the checks cannot drift.
The text metrics (ROUGE, BLEU, chrF, TER) list their rules alike (``nlgmetrics.bleu.refusals()``);
besides the shared checks (switches, ROUGE's seed), which raise their rule, their checks raise plain
``ValueError``/``TypeError``, so there the tests fire each rule with a probe whose message it names,
and map every refusal of the documented out-of-range settings to a rule.
The model cards' "What we refuse and why" sections are written from these lists.

>>> RULE = Refusal(("gap",), "a `gap` that is not a positive integer", "it is a step between masked tokens")
>>> with RULE.enforced():
...     raise ValueError("`gap` must be a positive integer, got 0.")
Traceback (most recent call last):
...
nlgmetrics.core.refusals.OptionError: `gap` must be a positive integer, got 0.
>>> refusal_sentences([RULE])
['Refused: a `gap` that is not a positive integer, because it is a step between masked tokens; checked before any model loads.']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

#: When a rule is checked: the option alone (no model needed) ...
BEFORE_LOADING = "before any model loads"
#: ... against the loaded model's tokenizer or context ...
AFTER_LOADING = "once the model is loaded, since it depends on the model (its vocabulary, context or parameters)"
#: ... or against the numbers themselves (it depends on the texts and the model's predictions).
WHILE_SCORING = "while scoring, since it depends on the model's predictions for the texts"
#: A metric without a model (ROUGE, BLEU, chrF, TER) checks the option alone ...
BEFORE_SCORING = "before any text is scored"
#: ... or against the texts (their tokens, their lengths).
WHILE_SCORING_TEXTS = "while scoring, since it depends on the texts"


@dataclass(frozen=True)
class Refusal:
    """One rule: the ``options`` it concerns, what is ``refused`` (a noun phrase), the ``reason``
    (why no meaningful number exists there), and ``stage``, when it is checked."""

    options: tuple[str, ...]
    refused: str
    reason: str
    stage: str = BEFORE_LOADING

    def sentence(self) -> str:
        """The rule as one plain sentence for a model card."""
        return f"Refused: {self.refused}, because {self.reason}; checked {self.stage}."

    def error(self, message: str) -> OptionError:
        """The error a check raises for this rule; ``message`` names the value and the fix."""
        return OptionError(message, self)

    @contextlib.contextmanager
    def enforced(self) -> Iterator[None]:
        """Re-raise a ``ValueError`` of a generic check (its message unchanged) as this rule's
        :class:`OptionError`."""
        try:
            yield
        except OptionError:
            raise
        except ValueError as error:
            raise OptionError(str(error), self) from None


class OptionError(ValueError):
    """A refused option value; ``refusal`` is the rule that refused it."""

    def __init__(self, message: str, refusal: Refusal):
        super().__init__(message)
        self.refusal = refusal

    def __reduce__(self) -> tuple[type, tuple[str, Refusal]]:
        # An error raised in a worker process travels back pickled: keep its rule.
        return (type(self), (str(self), self.refusal))


def refusal_sentences(rules: Iterable[Refusal]) -> list[str]:
    """One sentence per distinct rule, in the given order (see the module docstring)."""
    return [rule.sentence() for rule in dict.fromkeys(rules)]
