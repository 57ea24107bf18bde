"""Word edit distance for TER: Tercom's beam search around the diagonal, with the edit trace and a
cache of matrix rows shared by hypotheses with a common prefix.

The matrix has one row per hypothesis prefix (``i`` words) and one column per reference prefix
(``j`` words). Row ``i`` is filled only for ``j`` within ``beam`` of the pseudo-diagonal
``floor(i * n_ref / n_hyp)`` (all columns in the last row); cells outside stay "infinite". Costs
are 1 for a substitution, a hypothesis word left out and a reference word added; ties go to the
substitution (or match), then the deletion, then the insertion, as in Tercom. The trace is one
character per step, read from the start: ``" "`` match, ``"s"`` substitution, ``"d"`` a hypothesis
word without a reference word, ``"i"`` a reference word without a hypothesis word.

Every shifted variant of a hypothesis has the same length, so the beam and hence every row of a
given prefix is the same for all of them: rows are cached in a trie keyed by the prefix words
(at most :data:`MAX_CACHED_ROWS` rows per reference; the cache only saves time).

>>> distance = EditDistance(["a", "b", "c"])
>>> distance(["a", "x", "c", "d"])
(2, ' s d')
>>> distance([])
(3, 'iii')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

BEAM_WIDTH = 25
MAX_CACHED_ROWS = 10_000
INFINITY = int(1e16)


class EditDistance:
    """Edit distances of hypotheses (word lists) to one reference; see the module docstring."""

    def __init__(self, reference: Sequence[str]) -> None:
        self._reference = list(reference)
        width = len(self._reference) + 1
        # Row 0: j reference words added.
        self._first_costs = list(range(width))
        self._first_ops = "i" * width
        self._trie: dict = {}
        self._cached_rows = 0

    def __call__(self, hypothesis: Sequence[str]) -> tuple[int, str]:
        """``(edit distance, trace)`` of ``hypothesis`` against the reference."""
        costs, ops = [self._first_costs], [self._first_ops]
        node = self._trie
        for word in hypothesis:  # the longest cached prefix
            entry = node.get(word)
            if entry is None:
                break
            node, row_costs, row_ops = entry
            costs.append(row_costs)
            ops.append(row_ops)
        start = len(costs) - 1
        self._fill(hypothesis, start, costs, ops)
        self._remember(hypothesis, start, node, costs, ops)
        return costs[-1][-1], _trace(ops, len(hypothesis), len(self._reference))

    def _fill(self, hypothesis: Sequence[str], start: int, costs: list, ops: list) -> None:
        reference = self._reference
        n_ref, n_hyp = len(reference), len(hypothesis)
        width = n_ref + 1
        ratio = n_ref / n_hyp if n_hyp else 1
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH
        previous = costs[-1]
        for i in range(start + 1, n_hyp + 1):
            diagonal = math.floor(i * ratio)
            low = max(0, diagonal - beam)
            high = width if i == n_hyp else min(width, diagonal + beam)
            row = [INFINITY] * width
            row_ops = ["x"] * width
            word = hypothesis[i - 1]
            j = low
            if j == 0:
                row[0] = previous[0] + 1
                row_ops[0] = "d"
                j = 1
            for j in range(j, high):
                if word == reference[j - 1]:
                    best, op = previous[j - 1], " "
                else:
                    best, op = previous[j - 1] + 1, "s"
                if best >= INFINITY:  # the comparison with the initial "infinite" cell
                    best, op = INFINITY, "x"
                deletion = previous[j] + 1
                if best > deletion:
                    best, op = deletion, "d"
                insertion = row[j - 1] + 1
                if best > insertion:
                    best, op = insertion, "i"
                row[j] = best
                row_ops[j] = op
            costs.append(row)
            ops.append("".join(row_ops))
            previous = row

    def _remember(self, hypothesis: Sequence[str], start: int, node: dict, costs: list, ops: list) -> None:
        for i in range(start, len(hypothesis)):
            if self._cached_rows >= MAX_CACHED_ROWS:
                return
            child: dict = {}
            node[hypothesis[i]] = (child, costs[i + 1], ops[i + 1])
            self._cached_rows += 1
            node = child


def _trace(ops: list[str], i: int, j: int) -> str:
    steps = []
    while i > 0 or j > 0:
        op = ops[i][j]
        steps.append(op)
        if op == " " or op == "s":
            i -= 1
            j -= 1
        elif op == "i":
            j -= 1
        elif op == "d":
            i -= 1
        else:  # pragma: no cover - an "infinite" cell on the path would be a bug
            raise AssertionError(f"TER edit trace reached an unfilled cell at ({i}, {j})")
    return "".join(reversed(steps))
