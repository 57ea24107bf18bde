"""Longest common subsequences for ROUGE-L, ROUGE-Lsum and ROUGE-W.

ROUGE-L and ROUGE-Lsum use a bit-parallel LCS (Hyyro 2004): the DP row of the reference prefix
is one Python integer whose bits are the DP row's increments, so one row costs a few big-integer
operations instead of a Python loop over the candidate. The backtrack that ROUGE-Lsum needs
(union LCS) reads DP values back from the stored rows with ``int.bit_count``, and follows the
same tie-breaking as rouge-score and ROUGE-1.5.5 (prefer the diagonal on a match, else move
left only when the left cell is strictly larger), so the chosen LCS, and therefore the union, is
identical to theirs.

ROUGE-W's weighted LCS (float DP with consecutive-run lengths) is a plain DP, as in ROUGE-1.5.5.
Note that ROUGE-1.5.5 does not score ROUGE-W with the DP's WLCS value: it marks the chosen
path's positions in the reference and weighs runs of consecutive *reference* positions
(:func:`wlcs_hits`), so "A H B K C I D" against "A B C D ..." earns 4**w, not 4 * 1**w.
:func:`wlcs_value` is the paper's WLCS.

>>> masks = match_masks(("a", "b", "c", "b"))
>>> lcs_length(("b", "c", "b"), masks, 4)
3
>>> lcs_positions(("x", "a", "c"), ("a", "b", "c"), match_masks(("a", "b", "c")))
[1, 2]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def match_masks(tokens: Sequence[str]) -> dict[str, int]:
    """For each token, the bit set of positions where it occurs in ``tokens``."""
    masks: dict[str, int] = {}
    for position, token in enumerate(tokens):
        masks[token] = masks.get(token, 0) | (1 << position)
    return masks


def lcs_length(a: Sequence[str], b_masks: dict[str, int], b_len: int) -> int:
    """Length of the LCS of ``a`` and a sequence ``b`` given by its match masks and length."""
    if not a or not b_len:
        return 0
    full = (1 << b_len) - 1
    v = full
    get = b_masks.get
    for token in a:
        u = v & get(token, 0)
        if u:
            v = ((v + u) | (v - u)) & full
    # Each zero bit of v is one unit of LCS.
    return b_len - v.bit_count()


def lcs_positions(a: Sequence[str], b: Sequence[str], b_masks: dict[str, int]) -> list[int]:
    """Positions in ``a`` of one LCS of ``a`` and ``b`` (increasing), chosen as rouge-score does.

    rouge-score ``_backtrack_norec`` / ROUGE-1.5.5 ``markLCS``: from the bottom-right cell, take
    the diagonal when the tokens match, else go left when ``T[i][j-1] > T[i-1][j]``, else up.
    """
    b_len = len(b)
    if not a or not b_len:
        return []
    full = (1 << b_len) - 1
    get = b_masks.get
    rows = [full]
    v = full
    for token in a:
        u = v & get(token, 0)
        if u:
            v = ((v + u) | (v - u)) & full
        rows.append(v)
    if v == full:  # no common token
        return []
    # T[i][j] = j - popcount(rows[i] & ((1 << j) - 1))
    positions: list[int] = []
    i, j = len(a), b_len
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            i -= 1
            j -= 1
            positions.append(i)
            continue
        low = (1 << (j - 1)) - 1
        left = (j - 1) - (rows[i] & low).bit_count()
        up = j - (rows[i - 1] & ((low << 1) | 1)).bit_count()
        if left > up:
            j -= 1
        else:
            i -= 1
    positions.reverse()
    return positions


def union_lcs_hits(
    ref_sents: Sequence[Sequence[str]],
    pred_sents: Sequence[Sequence[str]],
    pred_masks: Sequence[dict[str, int]],
    ref_unigrams: Counter,
    pred_unigrams: Counter,
) -> int:
    """Summary-level LCS hits (ROUGE-Lsum / ROUGE-1.5.5 ROUGE-L), clipped by unigram counts.

    For each reference sentence, the union of its LCS positions with every predicted sentence
    is taken; each token in the union counts once while both texts still have an unused copy of
    it (the clipping that keeps ROUGE-L <= ROUGE-1, as in ROUGE-1.5.5 and rouge-score).
    """
    ref_left = dict(ref_unigrams)
    pred_left = dict(pred_unigrams)
    hits = 0
    for ref in ref_sents:
        if not ref:
            continue
        union: set[int] = set()
        for pred, masks in zip(pred_sents, pred_masks):
            union.update(lcs_positions(ref, pred, masks))
        for position in sorted(union):
            token = ref[position]
            if ref_left.get(token, 0) > 0 and pred_left.get(token, 0) > 0:
                hits += 1
                ref_left[token] -= 1
                pred_left[token] -= 1
    return hits


def _wlcs_dp(ref: Sequence[str], pred: Sequence[str], weight: float) -> tuple[float, list[bytearray]]:
    """Weighted-LCS DP of ROUGE-1.5.5 ``wlcs_inner``: (final WLCS value, move table).

    Same float operations and tie-breaking as the Perl script, so that ties between equally
    weighted paths resolve the same way. Moves: 1 diagonal, 2 up, 3 left. Only two rows of
    scores and run lengths are kept, and one byte per cell for the moves (bounded memory on
    long texts; the time stays quadratic, as in the Perl script).
    """
    m, n = len(ref), len(pred)
    s_prev = [0.0] * (n + 1)
    r_prev = [0] * (n + 1)
    move = [bytearray(n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        token = ref[i - 1]
        s_row = [0.0] * (n + 1)
        r_row = [0] * (n + 1)
        mv = move[i]
        for j in range(1, n + 1):
            if token == pred[j - 1]:
                k = r_prev[j - 1]
                s_row[j] = s_prev[j - 1] + (k + 1) ** weight - k**weight
                r_row[j] = k + 1
                mv[j] = 1
            elif s_prev[j] >= s_row[j - 1]:
                s_row[j] = s_prev[j]
                mv[j] = 2
            else:
                s_row[j] = s_row[j - 1]
                mv[j] = 3
        s_prev, r_prev = s_row, r_row
    return s_prev[n], move


def wlcs_value(ref: Sequence[str], pred: Sequence[str], weight: float) -> float:
    """WLCS(ref, pred) of Lin 2004 (consecutive matches of length k weigh ``k**weight``).

    >>> wlcs_value("abcdefg", "abcdhik", 2.0), wlcs_value("abcdefg", "ahbkcid", 2.0)
    (16.0, 4.0)
    """
    if not ref or not pred:
        return 0.0
    return _wlcs_dp(ref, pred, weight)[0]


def wlcs_mask(ref: Sequence[str], pred: Sequence[str], weight: float, mask: list[int]) -> None:
    """Mark in ``mask`` the ``ref`` positions of the weighted LCS with ``pred`` (ROUGE-1.5.5 markLCS)."""
    if not ref or not pred:
        return
    _, move = _wlcs_dp(ref, pred, weight)
    i, j = len(ref), len(pred)
    while i and j:
        step = move[i][j]
        if step == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif step == 2:
            i -= 1
        else:
            j -= 1


def wlcs_paper(
    ref_sents: Sequence[Sequence[str]], pred_sents: Sequence[Sequence[str]], weight: float
) -> tuple[float, float]:
    """Summary-level WLCS of the paper's definition, one best sentence per side.

    Returns (sum over reference sentences of their best WLCS with any predicted sentence,
    the same sum over predicted sentences). For one sentence per side both are WLCS(X, Y).
    """
    table = [[wlcs_value(ref, pred, weight) for pred in pred_sents] for ref in ref_sents]
    ref_hits = sum(max(row, default=0.0) for row in table)
    pred_hits = sum(max((row[j] for row in table), default=0.0) for j in range(len(pred_sents)))
    return ref_hits, pred_hits


def wlcs_hits(
    ref_sents: Sequence[Sequence[str]],
    pred_sents: Sequence[Sequence[str]],
    weight: float,
    ref_unigrams: Counter,
    pred_unigrams: Counter,
) -> tuple[float, float]:
    """Summary-level weighted LCS: (weighted hits, sum over reference sentences of len**weight).

    Reproduces ROUGE-1.5.5 ``wlcs``: consecutive hit runs in each reference sentence's union
    mask add ``run_length**weight``; hits are clipped by unigram counts like ROUGE-L. (Perl's
    run bookkeeping is kept as is: a masked position rejected by clipping neither extends nor
    ends the current run.)
    """
    ref_left = dict(ref_unigrams)
    pred_left = dict(pred_unigrams)
    hits = 0.0
    base = 0.0
    for ref in ref_sents:
        m = len(ref)
        base += m**weight
        if not m:
            continue
        mask = [0] * m
        for pred in pred_sents:
            wlcs_mask(ref, pred, weight, mask)
        run_length = 0
        for j in range(m):
            if not mask[j]:
                continue
            token = ref[j]
            if ref_left.get(token, 0) > 0 and pred_left.get(token, 0) > 0:
                run_length += 1
                if j + 1 == m or not mask[j + 1]:
                    hits += run_length**weight
                    run_length = 0
                ref_left[token] -= 1
                pred_left[token] -= 1
    return hits, base
