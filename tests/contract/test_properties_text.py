"""Property-based reliability tests of the text-overlap metrics (ROUGE family, BLEU, chrF, TER) on messy
input: empty / whitespace / punctuation-only / CJK / emoji / right-to-left / combining
marks / control characters / 10k-token texts, ragged multi-references, duplicated rows,
references identical to candidates.

Oracles are the reference implementations (``rouge-score``, ``sacrebleu``), never our own numbers;
invariances compare our function with itself under a change that must not matter (row order,
duplicated rows, splitting the batch, warm vs cleared caches). Both metrics are called through the
registry (``tests.support.properties_support.run_metric``) and read from their ``MetricResult``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.evaluate_support import sacrebleu_streams
from tests.support.properties_support import (
    TEXT_SETTINGS,
    assert_all_finite,
    assert_columns_close,
    assert_in_declared_range,
    call_unmutated,
    long_text,
    messy_or_long_text,
    messy_text,
    permutation,
    reference_batches,
    run_metric,
    take,
)

# integration: many generated examples, each against rouge-score and sacrebleu, and 10k-token texts
pytestmark = pytest.mark.integration

ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeW", "rougeS*", "rougeSU4"]
#: On 10k-token texts: rougeW's weighted LCS is O(n*m) in Python (~2 minutes for one 10k-token pair
#: on this machine) and rougeS* counts all n^2/2 skip-bigrams, so both are left to short texts.
LONG_TEXT_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeSU4"]
#: Types whose perfect match scores exactly 1 (rougeW with ROUGE-1.5.5 normalisation does not:
#: its recall of a perfect n-word match is n**(1-w), documented in the rouge_family card).
IDENTITY_TYPES = ["rouge1", "rougeL", "rougeLsum"]
BLEU_TOKENIZERS = ["13a", "intl", "char", "zh", "none"]
#: spBLEU: sacrebleu's SentencePiece tokenizers, on tiny models placed where sacrebleu looks.
SPM_TOKENIZERS = ["flores101", "flores200"]


def _rouge(preds, refs, **options) -> dict[str, list[float]]:
    """Per-example ROUGE columns (``T``, ``T_precision``, ``T_recall``); no bootstrap interval,
    which these properties do not read (``n_bootstrap=0`` leaves the columns unchanged)."""
    return run_metric("rouge_family", preds, refs, n_bootstrap=0, **options).scores


def _sentence_bleu(preds, refs, **options) -> dict[str, list[float]]:
    return run_metric("bleu", preds, refs, **options).scores


def _rouge_score_tokens(text: str) -> list[str]:
    """Tokens as the reference package ``rouge-score`` sees them (decides whether identity applies)."""
    from rouge_score import tokenize

    return tokenize.tokenize(text, None)


# ------------------------------------------------------------------------------------------------
# ROUGE


@pytest.mark.filterwarnings("ignore:rouge_family. the default tokenizer")  # expected on random scripts
@TEXT_SETTINGS
@given(reference_batches(text=messy_or_long_text), st.sampled_from(["best", "average"]), st.integers(0, 10**6))
def test_rouge_messy_batches(batch, multi_ref, seed) -> None:
    """Finite, in [0, 1], inputs untouched, identity = 1, invariant to order / duplicates / split /
    cache."""
    from nlgmetrics.rouge import clear_cache

    preds, refs = batch
    rouge = _rouge
    longest = max(len(t.split()) for t in [*preds, *(r for rs in refs for r in rs)])
    options = dict(rouge_types=ROUGE_TYPES if longest < 1000 else LONG_TEXT_TYPES, multi_ref=multi_ref)
    result = call_unmutated(run_metric, "rouge_family", preds, refs, n_bootstrap=0, **options)
    base = result.scores
    assert set(base) == {f"{t}{m}" for t in options["rouge_types"] for m in ("", "_precision", "_recall")}
    assert_all_finite(base, "rouge")
    assert_in_declared_range(result, "rouge")
    for name, values in base.items():
        assert all(0.0 <= v <= 1.0 + 1e-12 for v in values), (name, values)

    # identity: the candidate is one of its references and has tokens -> best F is 1
    if multi_ref == "best":
        for i, (p, rs) in enumerate(zip(preds, refs)):
            if p in rs and _rouge_score_tokens(p):
                for t in IDENTITY_TYPES:
                    assert base[t][i] == pytest.approx(1.0, abs=1e-12), (t, p)

    n = len(preds)
    order = permutation(n, seed)
    shuffled = rouge([preds[i] for i in order], [refs[i] for i in order], **options)
    assert_columns_close(take(base, order), shuffled, "rouge: row order")

    doubled = rouge(preds + preds[::-1], refs + refs[::-1], **options)
    assert_columns_close(base, take(doubled, range(n)), "rouge: duplicated rows")
    assert_columns_close(take(base, range(n - 1, -1, -1)), take(doubled, range(n, 2 * n)), "rouge: duplicate rows")

    half = max(1, n // 2)
    first, second = rouge(preds[:half], refs[:half], **options), (
        rouge(preds[half:], refs[half:], **options) if n > half else {k: [] for k in base})
    assert_columns_close(base, {k: first[k] + second[k] for k in base}, "rouge: batch split in two calls")

    clear_cache()
    assert_columns_close(base, rouge(preds, refs, **options), "rouge: cache cleared vs warm")


# Random non-ASCII text under the default tokenizer: the "found no token" warning is expected here
# (it has its own tests in test_rouge_tokenizers.py).
@pytest.mark.filterwarnings("ignore:rouge_family. the default tokenizer")
@TEXT_SETTINGS
@given(reference_batches(text=messy_text), st.booleans())
def test_rouge_matches_rouge_score_on_messy_text(batch, stem) -> None:
    """rouge1/2/L/Lsum (best reference) equal ``rouge-score``'s ``score_multi`` on messy unicode,
    with and without stemming."""
    from rouge_score import rouge_scorer

    preds, refs = batch
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    ours = _rouge(preds, refs, rouge_types=types, use_stemmer=stem)
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=stem)
    for i, (p, rs) in enumerate(zip(preds, refs)):
        expected = scorer.score_multi(rs, p)
        for t in types:
            for column, attr in ((f"{t}_precision", "precision"), (f"{t}_recall", "recall"), (t, "fmeasure")):
                assert ours[column][i] == pytest.approx(getattr(expected[t], attr), abs=1e-9), (column, p, rs)


def test_rouge_long_texts_no_warning_no_error() -> None:
    """ROUGE has no context limit: 10k-token texts are scored whole (identity still 1)."""
    import warnings

    text = long_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _rouge([text, text[:5000]], [[text], [text]], rouge_types=["rouge1", "rougeL", "rougeLsum"])
    assert out["rouge1"][0] == 1.0 and out["rougeL"][0] == 1.0
    assert 0.0 < out["rougeL_recall"][1] < 1.0


# ------------------------------------------------------------------------------------------------
# BLEU


@TEXT_SETTINGS
@given(reference_batches(text=messy_or_long_text), st.sampled_from(BLEU_TOKENIZERS), st.integers(0, 10**6),
       st.booleans())
def test_sentence_bleu_messy_batches(batch, tokenize, seed, lowercase) -> None:
    """Sentence BLEU equals sacrebleu's per row, in [0, 100], identity = 100, inputs untouched,
    invariant to order / duplicates / split / cache."""
    import sacrebleu

    from nlgmetrics.bleu import clear_caches

    preds, refs = batch
    bleu = _sentence_bleu
    result = call_unmutated(run_metric, "bleu", preds, refs, tokenize=tokenize, lowercase=lowercase)
    base = result.scores
    assert set(base) == {"sentence_bleu"}
    assert_all_finite(base, "bleu")
    assert_in_declared_range(result, "bleu")
    for i, (p, rs) in enumerate(zip(preds, refs)):
        expected = sacrebleu.sentence_bleu(p, rs, tokenize=tokenize, lowercase=lowercase)
        got = base["sentence_bleu"][i]
        assert 0.0 <= got <= 100.0 + 1e-9
        assert got == pytest.approx(expected.score, abs=1e-9), (p, rs)
        if p in rs and sacrebleu.BLEU(tokenize=tokenize, effective_order=True).tokenizer(p.rstrip()).split():
            assert got == pytest.approx(100.0, abs=1e-9), (p, rs)

    n = len(preds)
    order = permutation(n, seed)
    assert_columns_close(take(base, order), bleu([preds[i] for i in order], [refs[i] for i in order], tokenize=tokenize, lowercase=lowercase),
                         "bleu: row order")
    doubled = bleu(preds + preds, refs + refs, tokenize=tokenize, lowercase=lowercase)
    assert_columns_close(base, take(doubled, range(n)), "bleu: duplicated rows")
    assert_columns_close(base, take(doubled, range(n, 2 * n)), "bleu: duplicated rows (copies)")
    clear_caches()
    assert_columns_close(base, bleu(preds, refs, tokenize=tokenize, lowercase=lowercase), "bleu: caches cleared vs warm")


@TEXT_SETTINGS
@given(st.lists(st.tuples(messy_text, messy_text), min_size=1, max_size=6), st.sampled_from(BLEU_TOKENIZERS),
       st.integers(0, 10**6))
def test_corpus_bleu_messy_matches_sacrebleu_and_ignores_order(pairs, tokenize, seed) -> None:
    """Corpus BLEU (the registry's headline, ``aggregate()["bleu"]``) on messy single-reference data
    equals sacrebleu's and does not depend on row order."""
    import sacrebleu

    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    result = call_unmutated(run_metric, "bleu", preds, refs, tokenize=tokenize)
    ours = result.aggregate()
    assert result.main == "bleu" and result.main_score == ours["bleu"]
    expected = sacrebleu.corpus_bleu(preds, [refs], tokenize=tokenize)
    assert math.isfinite(ours["bleu"]) and math.isfinite(ours["bp"])
    assert ours["bleu"] == pytest.approx(expected.score, abs=1e-9)
    assert ours["bp"] == pytest.approx(expected.bp, abs=1e-12)
    order = permutation(len(preds), seed)
    shuffled = run_metric("bleu", [preds[i] for i in order], [refs[i] for i in order], tokenize=tokenize)
    assert shuffled.aggregate()["bleu"] == pytest.approx(ours["bleu"], abs=1e-9)
    identical = run_metric("bleu", preds, [[p] for p in preds], tokenize=tokenize)
    assert identical.aggregate()["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(preds, [preds], tokenize=tokenize).score, abs=1e-9)


@pytest.fixture(scope="module")
def flores_models(tmp_path_factory):
    """Tiny flores101 / flores200 models in sacrebleu's directory for this module's remaining tests
    (tests/support/spm_support.py): sacrebleu and we read the same files, nothing is downloaded."""
    from tests.support.spm_support import tiny_flores_models

    with tiny_flores_models(tmp_path_factory.mktemp("sacrebleu")) as directory:
        yield directory


@TEXT_SETTINGS
@given(reference_batches(text=messy_or_long_text), st.sampled_from(SPM_TOKENIZERS), st.booleans(),
       st.integers(0, 10**6))
def test_spbleu_messy_batches_match_sacrebleu(flores_models, batch, tokenize, lowercase, seed) -> None:
    """spBLEU (``tokenize="flores101"`` / ``"flores200"``): sentence BLEU per row and corpus BLEU
    equal sacrebleu's with the same SentencePiece model; invariant to row order; the signature
    names the model as sacrebleu's does."""
    from sacrebleu.metrics import BLEU

    preds, refs = batch
    result = call_unmutated(run_metric, "bleu", preds, refs, tokenize=tokenize, lowercase=lowercase)
    assert_all_finite(result.scores, "bleu")
    assert_in_declared_range(result, "bleu")
    anchor = BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=True)
    for got, p, rs in zip(result.scores["sentence_bleu"], preds, refs):
        assert got == pytest.approx(anchor.sentence_score(p, rs).score, abs=1e-9), (p, rs)
    corpus_anchor = BLEU(tokenize=tokenize, lowercase=lowercase)
    corpus = corpus_anchor.corpus_score(preds, sacrebleu_streams(refs))
    assert result.main_score == pytest.approx(corpus.score, abs=1e-9)
    assert f"|tokenize:{tokenize}|" in result.signature
    assert f"|tok:{tokenize}|" in corpus_anchor.get_signature().format()
    order = permutation(len(preds), seed)
    shuffled = run_metric("bleu", [preds[i] for i in order], [refs[i] for i in order], tokenize=tokenize,
                          lowercase=lowercase)
    assert_columns_close(take(result.scores, order), shuffled.scores, "spbleu: row order")


def test_bleu_long_texts_identity() -> None:
    """10k-token texts: no context limit, a perfect match is 100."""
    text = long_text()
    assert run_metric("bleu", [text], [[text]]).aggregate()["bleu"] == pytest.approx(100.0)
    assert _sentence_bleu([text], [[text, "x"]])["sentence_bleu"] == [pytest.approx(100.0)]


# ------------------------------------------------------------------------------------------------
# chrF / chrF++


@TEXT_SETTINGS
@given(reference_batches(text=messy_or_long_text), st.sampled_from([0, 2]), st.booleans(), st.booleans(),
       st.integers(0, 10**6), st.one_of(st.sampled_from([0, 0.0, 2]), st.floats(0.0, 10.0)), st.booleans())
def test_chrf_messy_batches_match_sacrebleu(batch, word_order, whitespace, lowercase, seed, beta, eps_smoothing) -> None:
    """Sentence and corpus chrF / chrF++ equal sacrebleu's ``CHRF`` on messy ragged batches, for
    any beta >= 0 (0: precision only) with either averaging; in [0, 100]; inputs untouched;
    invariant to row order (corpus and rows) and cleared caches."""
    from sacrebleu.metrics import CHRF

    from nlgmetrics.chrf import clear_caches

    preds, refs = batch
    options = dict(word_order=word_order, whitespace=whitespace, lowercase=lowercase, beta=beta,
                   eps_smoothing=eps_smoothing)
    result = call_unmutated(run_metric, "chrf", preds, refs, **options)
    base = result.scores
    assert set(base) == {"sentence_chrf"}
    assert_all_finite(base, "chrf")
    assert_in_declared_range(result, "chrf")
    anchor = CHRF(**options)
    for i, (p, rs) in enumerate(zip(preds, refs)):
        assert base["sentence_chrf"][i] == pytest.approx(anchor.sentence_score(p, rs).score, abs=1e-9), (p, rs)
    streams = sacrebleu_streams(refs)
    assert result.main_score == pytest.approx(anchor.corpus_score(preds, streams).score, abs=1e-9)
    order = permutation(len(preds), seed)
    shuffled = run_metric("chrf", [preds[i] for i in order], [refs[i] for i in order], **options)
    assert_columns_close(take(base, order), shuffled.scores, "chrf: row order")
    assert shuffled.main_score == pytest.approx(result.main_score, abs=1e-9)
    clear_caches()
    assert_columns_close(base, run_metric("chrf", preds, refs, **options).scores, "chrf: caches cleared vs warm")


def test_chrf_long_texts_identity() -> None:
    """10k-token texts: no context limit, a perfect match is 100 (chrF and chrF++)."""
    text = long_text()
    for word_order in (0, 2):
        result = run_metric("chrf", [text], [["x", text]], word_order=word_order)
        assert result.main_score == pytest.approx(100.0) and result.scores["sentence_chrf"] == [pytest.approx(100.0)]


# ------------------------------------------------------------------------------------------------
# TER (short texts: sacrebleu's TER is slow on 10k-token texts)


@TEXT_SETTINGS
@given(reference_batches(text=messy_text), st.booleans(), st.booleans(), st.integers(0, 10**6))
def test_ter_messy_batches_match_sacrebleu(batch, normalized, case_sensitive, seed) -> None:
    """Sentence and corpus TER equal sacrebleu's ``TER`` on messy ragged batches (with
    ``normalized``: through ``normalize_references_twice``, sacrebleu's second pass over the
    references, and the default equals sacrebleu on texts its tokenizer normalised once); >= 0
    and finite; inputs untouched; invariant to row order."""
    from sacrebleu.metrics import TER
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    preds, refs = batch
    options = dict(normalized=normalized, case_sensitive=case_sensitive)
    result = call_unmutated(run_metric, "ter", preds, refs, **options)
    base = result.scores
    assert set(base) == {"sentence_ter"}
    assert_all_finite(base, "ter")
    assert_in_declared_range(result, "ter")
    anchor = TER(**options)
    as_sacrebleu = run_metric("ter", preds, refs, **options, normalize_references_twice=normalized) \
        if normalized else result
    for i, (p, rs) in enumerate(zip(preds, refs)):
        want = anchor.sentence_score(p, rs).score
        assert as_sacrebleu.scores["sentence_ter"][i] == pytest.approx(want, abs=1e-9), (p, rs)
    streams = sacrebleu_streams(refs)
    assert as_sacrebleu.main_score == pytest.approx(anchor.corpus_score(preds, streams).score, abs=1e-9)
    if normalized:
        once, plain = TercomTokenizer(**options), TER(case_sensitive=True)
        for i, (p, rs) in enumerate(zip(preds, refs)):
            want = plain.sentence_score(once(p.rstrip()), [once(r.rstrip()) for r in rs]).score
            assert base["sentence_ter"][i] == pytest.approx(want, abs=1e-9), (p, rs)
    order = permutation(len(preds), seed)
    shuffled = run_metric("ter", [preds[i] for i in order], [refs[i] for i in order], **options)
    assert_columns_close(take(base, order), shuffled.scores, "ter: row order")
