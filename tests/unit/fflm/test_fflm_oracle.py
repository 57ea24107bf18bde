"""The naive FFLM oracle (tests/support/oracles/fflm_naive.py) checked by hand, so the oracle itself can fail:
its arithmetic (the authors' utils.py) and its truncation rule (the authors' delta.py)."""

from __future__ import annotations

import numpy as np

from tests.support.oracles.fflm_naive import naive_scores, prepare


def test_oracle_scores_by_hand():
    """The oracle's arithmetic against a hand computation (so the oracle itself can fail)."""
    lists = ([0.5, 0.0], [0.25, 0.5], [0.5, 0.5], [0.8], [0.4])
    fflm_value, prior_y, prior_x, cond_y = naive_scores(lists, (0.2, 0.3, 0.5))
    # Token 2 of s2s is floored to 1e-6.
    w = [np.exp(0.5), np.exp(1 - 1e-6)]
    expected_prior_y = ((np.log(0.5) - np.log(0.25)) * w[0] + (np.log(1e-6) - np.log(0.5)) * w[1]) / 2
    expected_cond_y = ((np.log(0.5) - np.log(0.5)) * w[0] + (np.log(1e-6) - np.log(0.5)) * w[1]) / 2
    expected_prior_x = (np.log(0.8) - np.log(0.4)) * np.exp(0.2)
    assert abs(prior_y - expected_prior_y) < 1e-12
    assert abs(cond_y - expected_cond_y) < 1e-12
    assert abs(prior_x - expected_prior_x) < 1e-12
    assert abs(fflm_value - (0.2 * expected_prior_y + 0.3 * expected_prior_x + 0.5 * expected_cond_y)) < 1e-12


class _SpaceTokenizer:
    """Whitespace tokenizer with a fixed vocabulary, to check the oracle's truncation by hand."""

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [int(t) for t in tokens]


def test_oracle_truncation_rule_by_hand():
    tok = _SpaceTokenizer()
    # Summary target: condition cut from the end so that 1 + |X| + |sep| + |Y| = max_len.
    ids, start = prepare(tok, 0, 8, "7 8", "1 2 3 4 5 6", "9")
    assert ids == [0, 1, 2, 3, 4, 9, 7, 8] and start == 5
    # Document target: the document is cut.
    ids, start = prepare(tok, 0, 8, "1 2 3 4 5 6", "7 8", "9", is_doc=True)
    assert ids == [0, 7, 8, 9, 1, 2, 3, 4] and start == 3
    # No condition: target cut to max_len - 1.
    ids, start = prepare(tok, 0, 4, "1 2 3 4 5 6", is_doc=True)
    assert ids == [0, 1, 2, 3] and start == 0
