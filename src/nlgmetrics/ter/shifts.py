"""TER's greedy block shifts (Snover et al. 2006, as Tercom and sacrebleu do them).

Repeatedly, among the blocks of up to :data:`MAX_SHIFT_SIZE` hypothesis words that also occur in
the reference (starting at most :data:`MAX_SHIFT_DISTANCE` positions apart), not already aligned
correctly (some word of the block, and some of the reference block, is an error) and not already
at their place, try moving the block before each reference-aligned position and keep the move
that lowers the edit distance most (ties: the longer block, then the earlier block, then the
earlier target). Stop when no move helps, or after :data:`MAX_SHIFT_CANDIDATES` candidate moves
over the whole search (then the last search's best move is not applied, as in Tercom). TER's
edits are the shifts made plus the edit distance of the shifted hypothesis.

>>> shifted_edits(["b", "c", "a"], ["a", "b", "c"])
1
>>> shifted_edits(["a", "b"], [])
2
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from nlgmetrics.ter.edit_distance import EditDistance

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DISTANCE = 50
MAX_SHIFT_CANDIDATES = 1000


def _alignment(trace: str) -> tuple[dict[int, int], list[int], list[int]]:
    """For each reference position the hypothesis position it is aligned to (the last hypothesis
    word before it, -1 for none), and the error flags of the reference and hypothesis words."""
    align: dict[int, int] = {-1: -1}  # "before the first reference word": a move to the start
    ref_err: list[int] = []
    hyp_err: list[int] = []
    h = r = -1
    for op in trace:
        if op == "d":  # a hypothesis word with no reference word
            h += 1
            hyp_err.append(1)
            continue
        r += 1
        if op == "i":  # a reference word with no hypothesis word
            align[r] = h
            ref_err.append(1)
            continue
        h += 1
        align[r] = h
        error = 0 if op == " " else 1
        hyp_err.append(error)
        ref_err.append(error)
    return align, ref_err, hyp_err


def _common_blocks(hyp: Sequence[str], ref: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """``(hyp start, ref start, length)`` of every equal block, by hyp start, ref start, length."""
    n_hyp, n_ref = len(hyp), len(ref)
    for start_h in range(n_hyp):
        for start_r in range(max(0, start_h - MAX_SHIFT_DISTANCE), min(n_ref, start_h + MAX_SHIFT_DISTANCE + 1)):
            length = 0
            while length < MAX_SHIFT_SIZE and hyp[start_h + length] == ref[start_r + length]:
                length += 1
                yield start_h, start_r, length
                if start_h + length == n_hyp or start_r + length == n_ref:
                    break


def _moved(words: list[str], start: int, length: int, target: int) -> list[str]:
    """``words`` with the block ``[start, start + length)`` moved before position ``target``."""
    block = words[start:start + length]
    if target < start:
        return words[:target] + block + words[target:start] + words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + block + words[target:]
    return words[:start] + words[start + length:length + target] + block + words[length + target:]


def _best_shift(hyp: list[str], ref: Sequence[str], distance: EditDistance,
                checked: int) -> tuple[int, list[str], int]:
    """``(gain, shifted hypothesis, candidates checked so far)`` of the best single shift."""
    score, trace = distance(hyp)
    align, ref_err, hyp_err = _alignment(trace)
    best: tuple[int, int, int, int] | None = None
    best_words = hyp
    for start_h, start_r, length in _common_blocks(hyp, ref):
        if not any(hyp_err[start_h:start_h + length]) or not any(ref_err[start_r:start_r + length]):
            continue  # already correct where it is
        if start_h <= align[start_r] < start_h + length:
            continue  # the block is already at its aligned place
        previous_target = -1
        for offset in range(-1, length):
            if start_r + offset not in align:
                break
            target = align[start_r + offset] + 1
            if target == previous_target:
                continue
            previous_target = target
            words = _moved(hyp, start_h, length, target)
            key = (score - distance(words)[0], length, -start_h, -target)
            checked += 1
            if best is None or key > best:
                best, best_words = key, words
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    return (0 if best is None else best[0]), best_words, checked


def shifted_edits(hyp: Sequence[str], ref: Sequence[str]) -> int:
    """TER's number of edits of ``hyp`` against ``ref`` (word lists): shifts + edit distance."""
    if not ref:
        return len(hyp)
    distance = EditDistance(ref)
    words = list(hyp)
    shifts = checked = 0
    while True:
        gain, shifted, checked = _best_shift(words, ref, distance, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        shifts += 1
        words = shifted
    return shifts + distance(words)[0]
