"""ROUGE's ``tokenizer=`` option: named tokenizers on texts in many scripts (hand-computed ROUGE),
callables (parity with rouge-score's ``RougeScorer(tokenizer=...)``), the warning when the
default tokenizer drops every word of a text, errors, signatures, and the front ends.

Expected values are computed by hand (the tokens are listed in each case and the fractions follow
from them), by rouge-score with the same tokens, or by naive tokenizers written here from
``unicodedata`` (independent of the ``regex`` patterns under test) - never by the code under test.
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
import warnings
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.rouge import TOKENIZER_NAMES, rouge_family, tokenize

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

TYPES = ["rouge1", "rouge2", "rougeL"]


def _scores(pred: str, ref: str | list[str], tokenizer, types=TYPES, **options) -> dict[str, float]:
    """Per-example columns of one pair (no bootstrap), without any warning filter change."""
    result = rouge_family([pred], [ref], rouge_types=types, tokenizer=tokenizer, n_bootstrap=0, **options)
    return {name: values[0] for name, values in result.scores.items()}


def _f(precision: Fraction, recall: Fraction) -> float:
    return float(2 * precision * recall / (precision + recall)) if precision + recall else 0.0


def _assert_prf(scores: dict[str, float], rouge_type: str, precision: Fraction, recall: Fraction) -> None:
    assert scores[f"{rouge_type}_precision"] == pytest.approx(float(precision), abs=1e-12), rouge_type
    assert scores[f"{rouge_type}_recall"] == pytest.approx(float(recall), abs=1e-12), rouge_type
    assert scores[rouge_type] == pytest.approx(_f(precision, recall), abs=1e-12), rouge_type


def _no_warnings(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args, **kwargs)


def _caught(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = function(*args, **kwargs)
    return value, [w for w in caught if "default tokenizer" in str(w.message)]


# --------------------------------------------------------------------------- hand-computed, by script

# (tokenizer, prediction, reference, expected prediction tokens, expected reference tokens,
#  {type: (precision, recall)}) - the counts behind each fraction are in the comment.
F = Fraction
HAND = {
    # 我 喜 欢 猫 / 我 喜 欢 狗: 3 of 4 unigrams; bigrams 我喜 喜欢 shared of 3; LCS 3.
    "chinese": ("cjk", "我喜欢猫", "我喜欢狗", "我 喜 欢 猫", "我 喜 欢 狗",
                {"rouge1": (F(3, 4), F(3, 4)), "rouge2": (F(2, 3), F(2, 3)), "rougeL": (F(3, 4), F(3, 4))}),
    # 猫 が 好 き で す / 犬 が 好 き で す (。 dropped): 5 of 6; bigrams が好 好き きで です: 4 of 5; LCS 5.
    "japanese": ("cjk", "猫が好きです。", "犬が好きです。", "猫 が 好 き で す", "犬 が 好 き で す",
                 {"rouge1": (F(5, 6), F(5, 6)), "rouge2": (F(4, 5), F(4, 5)), "rougeL": (F(5, 6), F(5, 6))}),
    # Katakana with the prolonged sound mark: コ ー ヒ ー を 飲 む (7) / お 茶 を 飲 む (5):
    # を 飲 む shared; bigrams を飲 飲む: 2 of 6 / 2 of 4; LCS 3.
    "katakana": ("cjk", "コーヒーを飲む", "お茶を飲む", "コ ー ヒ ー を 飲 む", "お 茶 を 飲 む",
                 {"rouge1": (F(3, 7), F(3, 5)), "rouge2": (F(2, 6), F(2, 4)), "rougeL": (F(3, 7), F(3, 5))}),
    # кошка сидит на ковре / кошка лежит на ковре: 3 of 4; bigram "на ковре" 1 of 3; LCS 3.
    "russian": ("unicode", "Кошка сидит на ковре.", "Кошка лежит на ковре.", "кошка сидит на ковре",
                "кошка лежит на ковре",
                {"rouge1": (F(3, 4), F(3, 4)), "rouge2": (F(1, 3), F(1, 3)), "rougeL": (F(3, 4), F(3, 4))}),
    # Arabic with diacritics (combining marks stay inside the word): 3 of 4 words; bigram على السجادة; LCS 3.
    "arabic": ("unicode", "القِطَّة تجلس على السجادة", "القِطَّة نائمة على السجادة",
               "القِطَّة تجلس على السجادة", "القِطَّة نائمة على السجادة",
               {"rouge1": (F(3, 4), F(3, 4)), "rouge2": (F(1, 3), F(1, 3)), "rougeL": (F(3, 4), F(3, 4))}),
    # Devanagari vowel signs and virama are combining marks: 5 / 6 words, 4 shared
    # (बिल्ली चटाई पर है); bigrams बिल्ली-चटाई, चटाई-पर: 2 of 4 / 2 of 5; LCS 4.
    "hindi": ("unicode", "बिल्ली चटाई पर बैठी है।", "बिल्ली चटाई पर सो रही है।",
              "बिल्ली चटाई पर बैठी है", "बिल्ली चटाई पर सो रही है",
              {"rouge1": (F(4, 5), F(4, 6)), "rouge2": (F(2, 4), F(2, 5)), "rougeL": (F(4, 5), F(4, 6))}),
    # Greek, upper case lowered (ΓΆΤΑ -> γάτα): 4 of 5; bigrams η-γάτα, στο-χαλί: 2 of 4; LCS 4.
    "greek": ("unicode", "Η γάτα κάθεται στο χαλί", "Η ΓΆΤΑ κοιμάται στο χαλί",
              "η γάτα κάθεται στο χαλί", "η γάτα κοιμάται στο χαλί",
              {"rouge1": (F(4, 5), F(4, 5)), "rouge2": (F(2, 4), F(2, 4)), "rougeL": (F(4, 5), F(4, 5))}),
    # Accented Latin, composed vs decomposed é/è (NFC: the same words): identity.
    "accented": ("unicode", "Le café est très bon", "Le cafe\u0301 est tre\u0300s bon",
                 "le café est très bon", "le café est très bon",
                 {"rouge1": (F(1), F(1)), "rouge2": (F(1), F(1)), "rougeL": (F(1), F(1))}),
    # Korean words (eojeol): 나는 고양이를 좋아한다 / 나는 개를 좋아한다: 2 of 3; no shared bigram; LCS 2.
    "korean": ("unicode", "나는 고양이를 좋아한다", "나는 개를 좋아한다", "나는 고양이를 좋아한다",
               "나는 개를 좋아한다",
               {"rouge1": (F(2, 3), F(2, 3)), "rouge2": (F(0), F(0)), "rougeL": (F(2, 3), F(2, 3))}),
    # Thai, character level (base + following marks): แ ม ว นั่ ง บ น เ สื่ อ (10) /
    # แ ม ว น อ น บ น เ สื่ อ (11); clipped unigrams: แ ม ว บ น เ สื่ อ = 8; bigrams แม มว บน
    # นเ เสื่ สื่อ = 6 of 9 / 6 of 10; LCS แ ม ว บ น เ สื่ อ = 8.
    "thai_char": ("char", "แมวนั่งบนเสื่อ", "แมวนอนบนเสื่อ", "แ ม ว นั่ ง บ น เ สื่ อ",
                  "แ ม ว น อ น บ น เ สื่ อ",
                  {"rouge1": (F(8, 10), F(8, 11)), "rouge2": (F(6, 9), F(6, 10)), "rougeL": (F(8, 10), F(8, 11))}),
    # Thai segmented beforehand (e.g. by pythainlp), split at spaces: 3 of 4; bigram บน-เสื่อ; LCS 3.
    "thai_words": ("whitespace", "แมว นั่ง บน เสื่อ", "แมว นอน บน เสื่อ", "แมว นั่ง บน เสื่อ",
                   "แมว นอน บน เสื่อ",
                   {"rouge1": (F(3, 4), F(3, 4)), "rouge2": (F(1, 3), F(1, 3)), "rougeL": (F(3, 4), F(3, 4))}),
}


@pytest.mark.parametrize("case", sorted(HAND))
def test_hand_computed_rouge_in_each_script(case):
    tokenizer, pred, ref, pred_tokens, ref_tokens, expected = HAND[case]
    assert tokenize(pred, tokenizer=tokenizer) == tuple(pred_tokens.split())
    assert tokenize(ref, tokenizer=tokenizer) == tuple(ref_tokens.split())
    scores = _no_warnings(_scores, pred, ref, tokenizer)
    for rouge_type, (precision, recall) in expected.items():
        _assert_prf(scores, rouge_type, precision, recall)


@pytest.mark.parametrize("case", ["chinese", "japanese", "russian", "arabic", "hindi", "greek", "korean", "thai_char"])
def test_the_default_tokenizer_scores_these_pairs_zero_and_warns(case):
    _, pred, ref, *_ = HAND[case]
    scores, caught = _caught(_scores, pred, ref, "default")
    assert set(scores.values()) == {0.0}
    assert len(caught) == 1


def test_default_keeps_ascii_fragments_of_accented_words():
    # rouge-score's tokenizer: "café" -> "caf", decomposed "cafe\u0301" -> "cafe", "très" -> "tr s".
    # le caf est tr s bon / le cafe est tre s bon: 4 of 6 shared (le est s bon); no warning (tokens remain).
    pred, ref = HAND["accented"][1:3]
    assert tokenize(pred) == ("le", "caf", "est", "tr", "s", "bon")
    scores = _no_warnings(_scores, pred, ref, "default")
    _assert_prf(scores, "rouge1", F(4, 6), F(4, 6))


def test_unicode_alone_cannot_split_chinese_or_thai():
    # One run of letters is one word: no partial credit (hence "cjk", "char" or a callable).
    assert tokenize("我喜欢猫", tokenizer="unicode") == ("我喜欢猫",)
    assert _scores("我喜欢猫", "我喜欢狗", "unicode")["rouge1"] == 0.0
    assert _scores("แมวนั่งบนเสื่อ", "แมวนอนบนเสื่อ", "unicode")["rouge1"] == 0.0


def test_cjk_keeps_other_scripts_as_words_and_drops_punctuation():
    assert tokenize("我爱Python 3.12和东京！", tokenizer="cjk") == ("我", "爱", "python", "3", "12", "和", "东", "京")
    assert tokenize("「猫」、犬。", tokenizer="cjk") == ("猫", "犬")
    # Hangul is written with spaces: words, not characters
    assert tokenize("나는 학생", tokenizer="cjk") == ("나는", "학생")


def test_tokenize_with_an_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown tokenizer 'jieba'"):
        tokenize("a", tokenizer="jieba")


def test_greek_final_sigma_and_case():
    # "ΟΔΟΣ".lower() is "οδος" with a final ς, the spelling of the lower-case word
    assert tokenize("ΟΔΟΣ", tokenizer="unicode") == tokenize("οδος", tokenizer="unicode") == ("οδος",)


def test_whitespace_keeps_punctuation_attached():
    assert tokenize("The cat, sat.", tokenizer="whitespace") == ("the", "cat,", "sat.")
    # the, cat, sat. / the cat sat: 1 of 3 ("the")
    _assert_prf(_scores("The cat, sat.", "the cat sat", "whitespace"), "rouge1", F(1, 3), F(1, 3))


@pytest.mark.parametrize("tokenizer", ["unicode", "cjk", "char", "whitespace"])
@pytest.mark.parametrize("text", ["", "   ", "。！？", "...!!!", "😀 🎉", "\n\n"])
def test_texts_without_tokens_score_zero_without_warning(tokenizer, text):
    assert tokenize(text, tokenizer=tokenizer) == () or tokenizer == "whitespace"
    scores = _no_warnings(_scores, text, "a real reference", tokenizer, types=["rouge1", "rougeLsum"])
    assert set(scores.values()) == {0.0}
    scores = _no_warnings(_scores, "a real prediction", text, tokenizer, types=["rouge1", "rougeLsum"])
    assert set(scores.values()) == {0.0}


# --------------------------------------------------------------------------- independent oracles


def _naive_unicode(text: str) -> list[str]:
    """Runs of characters of category L*, M*, N* (unicodedata only), after lower() and NFC."""
    text = unicodedata.normalize("NFC", text.lower())
    words, current = [], ""
    for char in text:
        if unicodedata.category(char)[0] in "LMN":
            current += char
        elif current:
            words.append(current)
            current = ""
    return words + [current] if current else words


def _is_cjk_letter(char: str) -> bool:
    name = unicodedata.name(char, "")
    return unicodedata.category(char)[0] in "LN" and name.startswith(
        ("CJK UNIFIED IDEOGRAPH", "HIRAGANA", "KATAKANA", "CJK COMPATIBILITY IDEOGRAPH"))


def _naive_cjk(text: str) -> list[str]:
    tokens = []
    for word in _naive_unicode(text):
        pieces, current = [], ""
        for char in word:
            if _is_cjk_letter(char):
                if current:
                    pieces.append(current)
                pieces.append(char)
                current = ""
            elif unicodedata.category(char)[0] == "M" and pieces and not current and _is_cjk_letter(pieces[-1][0]):
                pieces[-1] += char  # a mark right after a CJK character (same word) stays with it
            else:
                current += char
        tokens += pieces + [current] if current else pieces
    return tokens


#: Han, Hiragana, Katakana (and ー), Latin with accents, Cyrillic, Hangul, Devanagari, digits,
#: combining acute, punctuation (ASCII and CJK), spaces and a newline.
_ALPHABET = (
    [chr(c) for c in range(0x4E00, 0x4E40)] + [chr(c) for c in range(0x3041, 0x3060)]
    + [chr(c) for c in range(0x30A1, 0x30C0)] + ["ー"] + list("abcXYZéüßç") + list("кошаДОМ")
    + list("나는학생") + list("हिन्दी") + list("0123") + ["\u0301"] + list(".,!?-'") + list("。、！「」")
    + [" "] * 8 + ["\n"]
)


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 25))) for _ in range(count)]


@pytest.mark.parametrize("name, oracle", [("unicode", _naive_unicode), ("cjk", _naive_cjk)])
def test_named_tokenizers_match_naive_unicodedata_oracles(name, oracle):
    for text in _random_texts(seed=len(name), count=1500):
        assert list(tokenize(text, tokenizer=name)) == oracle(text), text


class _Tokens:
    """rouge-score's Tokenizer interface around a function."""

    def __init__(self, function):
        self.function = function

    def tokenize(self, text):
        return self.function(text)


@pytest.mark.parametrize("name, oracle", [("unicode", _naive_unicode), ("cjk", _naive_cjk),
                                          ("whitespace", lambda text: text.lower().split())])
def test_named_tokenizers_score_as_rouge_score_with_the_same_tokens(name, oracle):
    texts = _random_texts(seed=7, count=90)
    preds, refs = texts[:30], [[texts[30 + i], texts[60 + i]] for i in range(30)]
    preds[0], refs[1] = refs[0][0], [preds[1]]  # an identity in each direction
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    ours = rouge_family(preds, refs, rouge_types=types, tokenizer=name, n_bootstrap=0).scores
    scorer = rouge_scorer.RougeScorer(types, tokenizer=_Tokens(oracle))
    for i, (pred, ref_list) in enumerate(zip(preds, refs)):
        expected = scorer.score_multi(ref_list, pred)
        for t in types:
            assert ours[t][i] == pytest.approx(expected[t].fmeasure, abs=1e-12), (t, pred, ref_list)
            assert ours[f"{t}_recall"][i] == pytest.approx(expected[t].recall, abs=1e-12), (t, pred, ref_list)
    assert max(ours["rouge1"]) == 1.0 and 0 < sum(ours["rouge1"]) < 30


def test_unicode_equals_default_on_ascii_text():
    rng = random.Random(5)
    alphabet = "abcXYZ019 .,-_'!?\n\t"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert tokenize(text, tokenizer="unicode") == tokenize(text)
        assert tokenize(text, stem=True, tokenizer="unicode") == tokenize(text, stem=True)


# --------------------------------------------------------------------------- stemming and stopwords


def test_stemmers_apply_to_ascii_words_only():
    assert tokenize("Running кошки cafés organizations", stem=True, tokenizer="unicode") == (
        "run", "кошки", "cafés", "organ")
    assert tokenize("generously организации", stem="rouge155", tokenizer="unicode") == ("gener", "организации")
    # whitespace tokens with punctuation attached are not ASCII words: left as they are
    assert tokenize("running, running", stem=True, tokenizer="whitespace") == ("running,", "run")
    # the stopword list is English; it applies to every tokenizer's tokens
    assert tokenize("the cat и кошка", remove_stopwords=True, tokenizer="unicode") == ("cat", "и", "кошка")


def test_unicode_with_stemming_matches_rouge_score_on_english():
    preds = ["The cats were running quickly", "organizations generously connected"]
    refs = [["a cat runs quick"], ["the organization connects generously"]]
    ours = rouge_family(preds, refs, rouge_types=TYPES, tokenizer="unicode", use_stemmer=True, n_bootstrap=0).scores
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
    for i, (pred, ref_list) in enumerate(zip(preds, refs)):
        expected = scorer.score_multi(ref_list, pred)
        for t in TYPES:
            assert ours[t][i] == pytest.approx(expected[t].fmeasure, abs=1e-12)
    assert ours["rouge1"][0] > 0.4  # stemming matters: cats/cat, running/runs


# --------------------------------------------------------------------------- callables


def _split(text):
    return text.split()


def _chars(text):
    return [c for c in text if not c.isspace()]


class _HuggingFaceLike:
    """Callable (returning something else) with a ``tokenize`` method: the method is used."""

    def __call__(self, text):
        return {"input_ids": [1, 2, 3]}

    def tokenize(self, text):
        return text.split()


CALLABLE_TEXTS = (
    ["The cat sat on the mat", "我喜欢猫\n他喜欢狗", "Кошка сидит", "", "a b c d\ne f", "x"],
    [["the cat is on the mat", "The cat"], ["我喜欢狗\n他喜欢猫"], ["кошка сидит"], ["something"],
     ["a b\nc d e f"], [""]],
)


@pytest.mark.parametrize("function", [_split, _chars, str.split])
def test_callable_tokenizer_matches_rouge_score_tokenizer_object(function):
    preds, refs = CALLABLE_TEXTS
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, tokenizer=_Tokens(function))
    for given in (function, _Tokens(function)):  # a function, or rouge-score's tokenize interface
        ours = rouge_family(preds, refs, rouge_types=types, tokenizer=given, n_bootstrap=0).scores
        for i, (pred, ref_list) in enumerate(zip(preds, refs)):
            expected = scorer.score_multi(ref_list, pred)
            for t in types:
                for suffix, attr in (("", "fmeasure"), ("_precision", "precision"), ("_recall", "recall")):
                    assert ours[t + suffix][i] == pytest.approx(getattr(expected[t], attr), abs=1e-12), (t, i)


def test_callable_tokens_are_used_as_given():
    # no lower-casing: "The" != "the" -> 5 of 6 (the, cat, sat, on, mat vs The cat ...: "The" unmatched;
    # the ref has "the" twice, the prediction once, so clipped: cat sat on the mat = 5 of 6)
    scores = _scores("The cat sat on the mat", "the cat sat on the mat", _split)
    _assert_prf(scores, "rouge1", F(5, 6), F(5, 6))
    assert _scores("The cat sat on the mat", "the cat sat on the mat", "whitespace")["rouge1"] == 1.0


def test_object_with_tokenize_method_is_preferred_to_calling_it():
    scores = _scores("a b c", "a b d", _HuggingFaceLike())
    _assert_prf(scores, "rouge1", F(2, 3), F(2, 3))


def test_callable_is_not_cached_across_calls():
    # Two different callables on the same text: each call uses its own (no shared cache by text).
    first = _scores("a-b c", "a b c", lambda t: t.split())["rouge1"]  # a-b, c / a b c: 1 of 2, 1 of 3
    second = _scores("a-b c", "a b c", lambda t: t.replace("-", " ").split())["rouge1"]
    assert first == pytest.approx(_f(F(1, 2), F(1, 3))) and second == 1.0


def test_callable_never_sees_its_result_mutated_and_inputs_unchanged():
    preds, refs = ["b a"], [["a b"]]
    seen = []

    def spy(text):
        seen.append(text)
        return text.split()

    rouge_family(preds, refs, tokenizer=spy, rouge_types=["rouge1", "rougeLsum"], n_bootstrap=0)
    assert preds == ["b a"] and refs == [["a b"]]
    assert set(seen) == {"b a", "a b"}  # whole texts, then their lines (the same here)


# --------------------------------------------------------------------------- ROUGE-Lsum: sentences first


def _naive_char(text: str) -> list[str]:
    """Every letter or digit (or a mark with no letter before it) after lower() and NFC, with the
    combining marks that follow it (unicodedata only)."""
    tokens: list[str] = []
    previous = ""
    for char in unicodedata.normalize("NFC", text.lower()):
        category = unicodedata.category(char)[0]
        if category == "M" and previous in ("L", "M", "N"):
            tokens[-1] += char
        elif category in ("L", "M", "N"):
            tokens.append(char)
        previous = category
    return tokens


def _split_space(text):
    """str.split(" "): its tokens can hold a newline ("mat\nthe"), and empty tokens are kept."""
    return text.split(" ")


def _pieces(text):
    """Words and the whitespace between them, every piece a token (the newlines too)."""
    return [piece for piece in re.split(r"(\s)", text) if piece]


#: Every kind of ``tokenizer=``: each named one (with its rouge-score oracle: rouge-score's own
#: default tokenizer, or a naive one above, tokenizing each sentence) and callables, including
#: ones whose tokens can contain a newline, so that tokenizing the whole text would join words of
#: two sentences; a function, a lambda, a builtin, a partial, an object with a tokenize method.
LSUM_TOKENIZERS = {
    "default": ("default", None),
    "default+stemmer": ("default", "stem"),
    "whitespace": ("whitespace", lambda text: text.lower().split()),
    "unicode": ("unicode", _naive_unicode),
    "cjk": ("cjk", _naive_cjk),
    "char": ("char", _naive_char),
    "str.split": (str.split, str.split),
    "split(' ')": (_split_space, _split_space),
    "lambda split(' ')": (lambda text: text.split(" "), _split_space),
    "characters": (lambda text: list(text), list),  # the newline is a token of the whole text
    "pieces": (_pieces, _pieces),
    "partial": (functools.partial(str.split, sep=" "), _split_space),
    "tokenize method": (_Tokens(_split_space), _split_space),
}

_LSUM_WORDS = ["the", "cat", "The", "sat", "on", "mat", "a", "猫", "喜欢", "кошка", "Кошка", "café", "cafe\u0301",
               "running", "runs", "1", "a-b", "ok!", "😀", "x"]


@st.composite
def _lined_text(draw, lines=None):
    """A text of sentences separated by newlines (single, doubled, with a space around them),
    words separated by one or two spaces or a tab; sometimes a leading or trailing newline."""
    if lines is None:
        lines = draw(st.lists(st.lists(st.sampled_from(_LSUM_WORDS), max_size=6), min_size=1, max_size=4))
    rendered = []
    for words in lines:
        line = ""
        for index, word in enumerate(words):
            line += (draw(st.sampled_from([" ", " ", "  ", "\t"])) if index else "") + word
        rendered.append(line)
    text = rendered[0]
    for line in rendered[1:]:
        text += draw(st.sampled_from(["\n", "\n", "\n\n", " \n", "\n "])) + line
    return draw(st.sampled_from(["", "\n"])) + text + draw(st.sampled_from(["", "\n"]))


@st.composite
def _lsum_pair(draw):
    """(prediction, references): the prediction is often the first reference's sentences in
    another order (the case where sentence boundaries decide the score)."""
    lines = draw(st.lists(st.lists(st.sampled_from(_LSUM_WORDS), min_size=1, max_size=6), min_size=1, max_size=4))
    first = draw(_lined_text(lines))
    if draw(st.booleans()):
        prediction = draw(_lined_text(draw(st.permutations(lines))))
    else:
        prediction = draw(_lined_text())
    others = draw(st.lists(_lined_text(), max_size=1))
    return prediction, [first, *others]


def _lsum_scorer(kind: str):
    types = ["rouge1", "rougeL", "rougeLsum"]
    _, oracle = LSUM_TOKENIZERS[kind]
    if oracle is None or oracle == "stem":
        return rouge_scorer.RougeScorer(types, use_stemmer=oracle == "stem")
    return rouge_scorer.RougeScorer(types, tokenizer=_Tokens(oracle))


@pytest.mark.parametrize("kind", list(LSUM_TOKENIZERS))
@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(pairs=st.lists(_lsum_pair(), min_size=1, max_size=3))
def test_rouge_lsum_tokenizes_each_sentence_as_rouge_score_does(kind, pairs):
    """ROUGE-Lsum with every tokenizer kind equals rouge-score's, which splits a text into its
    non-empty lines first and tokenizes each line (rouge1/rougeL: the whole text)."""
    tokenizer, oracle = LSUM_TOKENIZERS[kind]
    scorer = _lsum_scorer(kind)
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the default tokenizer's "no token" warning on CJK lines
        ours = rouge_family(preds, refs, rouge_types=["rouge1", "rougeL", "rougeLsum"], tokenizer=tokenizer,
                            use_stemmer=oracle == "stem", n_bootstrap=0).scores
    for i, (pred, ref_list) in enumerate(pairs):
        expected = scorer.score_multi(ref_list, pred)
        for t in ("rouge1", "rougeL", "rougeLsum"):
            for suffix, attr in (("", "fmeasure"), ("_precision", "precision"), ("_recall", "recall")):
                assert ours[t + suffix][i] == pytest.approx(getattr(expected[t], attr), abs=1e-12), (
                    kind, t + suffix, pred, ref_list)


def test_rouge_lsum_swapped_sentences_with_split_on_spaces():
    """The two sentences of the reference in the other order: every token of each sentence is
    matched by the same sentence of the prediction, so ROUGE-Lsum is 1 (rouge-score's number)
    with text.split(" ") as with text.split(); tokenizing the whole text first would make the
    tokens "sat\nthe" and "ran\nthe" and lose the match."""
    pred, ref = "the cat sat\nthe dog ran", "the dog ran\nthe cat sat"
    for tokenizer in (str.split, _split_space, lambda text: text.split(" "), _Tokens(_split_space)):
        scores = _scores(pred, ref, tokenizer, types=["rougeLsum", "rougeW"])
        assert scores["rougeLsum"] == 1.0, tokenizer
        assert scores["rougeW"] == _scores(pred, ref, "whitespace", types=["rougeW"])["rougeW"], tokenizer


@pytest.mark.parametrize("bad, message", [
    (lambda t: t, "returned str"),
    (lambda t: [1, 2], "type int"),
    (lambda t: None, "returned NoneType"),
    (lambda t: {"a": 1}, "returned dict"),
])
def test_callable_with_bad_output_is_a_clear_error(bad, message):
    with pytest.raises(ValueError, match=message):
        rouge_family(["a b"], ["a b"], tokenizer=bad)


@pytest.mark.parametrize("option", [{"use_stemmer": True}, {"use_stemmer": "rouge155"}, {"remove_stopwords": True}])
def test_callable_with_stemming_or_stopwords_is_refused(option):
    with pytest.raises(ValueError, match="callable tokenizer.*named tokenizer"):
        rouge_family(["a b"], ["a b"], tokenizer=_split, **option)


@pytest.mark.parametrize("bad, message", [
    ("Unicode", r"Unknown tokenizer='Unicode'.*'default', 'whitespace', 'unicode', 'cjk', 'char'"),
    ("jieba", "Unknown tokenizer='jieba'"),
    ("", "Unknown tokenizer=''"),
    (3, "neither a name"),
    (["unicode"], "neither a name"),
    (_Tokens, "is a class; pass an instance"),
])
def test_bad_tokenizer_is_a_clear_error(bad, message):
    with pytest.raises(ValueError, match=message):
        rouge_family(["a b"], ["a b"], tokenizer=bad)


# --------------------------------------------------------------------------- the warning


def test_warning_once_per_call_naming_the_option():
    preds = ["我喜欢猫", "猫が好き", "the cat", "Кошка"]
    refs = [["我喜欢狗"], ["犬が好き", "ok"], ["猫"], ["кошка"]]
    for _ in range(2):  # once per call, on every call (not once per process)
        _, caught = _caught(rouge_family, preds, refs, n_bootstrap=0)
        assert len(caught) == 1
        message = str(caught[0].message)
        assert "3 predictions and 4 references" in message and 'tokenizer="cjk"' in message
        assert message.index('tokenizer="cjk"') < message.index('tokenizer="unicode"')  # Chinese first
        assert caught[0].filename == __file__  # points at the caller
    # Russian only: "unicode" suggested first
    _, caught = _caught(rouge_family, ["Кошка сидит"], ["a cat"], n_bootstrap=0)
    assert len(caught) == 1 and "1 prediction " in str(caught[0].message)
    message = str(caught[0].message)
    assert message.index('tokenizer="unicode"') < message.index('tokenizer="cjk"')


def test_no_warning_with_another_tokenizer_or_partial_tokens():
    _no_warnings(rouge_family, ["我喜欢猫", "Кошка"], ["我喜欢狗", "кошка"], tokenizer="unicode", n_bootstrap=0)
    _no_warnings(rouge_family, ["我喜欢猫", "Кошка"], ["我喜欢狗", "кошка"], tokenizer="cjk", n_bootstrap=0)
    _no_warnings(rouge_family, ["你好 ok", "café"], ["ok", "cafe"], n_bootstrap=0)  # some tokens survive
    _no_warnings(rouge_family, ["...", "😀", ""], ["!!!", "。", " "], n_bootstrap=0)  # nothing to keep
    # stopword removal emptying an English text is not the tokenizer's doing
    _no_warnings(rouge_family, ["the of a"], ["the"], remove_stopwords=True, n_bootstrap=0)


def test_warning_counts_references_only_and_cached_texts():
    # the reference is cached from an earlier call: still counted, in every call
    _caught(rouge_family, ["a"], ["猫"], n_bootstrap=0)
    _, caught = _caught(rouge_family, ["a", "b"], [["猫"], ["b", "猫"]], n_bootstrap=0)
    assert len(caught) == 1 and "2 references" in str(caught[0].message)
    assert "prediction" not in str(caught[0].message).split("(first")[0]


# --------------------------------------------------------------------------- signatures, front ends


@pytest.mark.parametrize("tokenizer, expected", [
    ("default", "rouge_score"), (None, "rouge_score"), ("whitespace", "whitespace"), ("unicode", "unicode"),
    ("cjk", "cjk"), ("char", "char"),
    (_split, "callable.tests.unit.rouge.test_rouge_tokenizers._split"),
    (_Tokens(_split), "callable.tests.unit.rouge.test_rouge_tokenizers._Tokens.tokenize"),
    (str.split, "callable.str.split"),
    (functools.partial(_split), "callable.partial.tests.unit.rouge.test_rouge_tokenizers._split"),
])
def test_signature_records_the_tokenizer(tokenizer, expected):
    result = rouge_family(["a b"], ["a b"], tokenizer=tokenizer, n_bootstrap=0)
    assert parse_signature(result.signature)["tokenize"] == expected


def test_default_signature_and_numbers_are_unchanged():
    default = rouge_family(["the cat sat"], [["the cat sat down", "a dog"]], rouge_types=("rouge1", "rougeL"))
    assert default.signature == (
        "rouge_family|aggregation:bootstrap|beta:1|confidence:0.95|multi_ref:best|n_bootstrap:1000|nrefs:2|"
        "rouge_types:rouge1,rougeL|seed:0|stemmer:no|stopwords:no|tokenize:rouge_score|version:0.1.0")
    explicit = rouge_family(["the cat sat"], [["the cat sat down", "a dog"]], rouge_types=("rouge1", "rougeL"),
                            tokenizer="default")
    assert explicit == default


def test_rouge155_options_work_with_named_tokenizers():
    # ROUGE-1.5.5's averaging and ROUGE-W are tokenizer-independent: the same per-example
    # recall/precision columns feed them (here: hand-computed R1 of the Chinese pair, 3/4).
    result = rouge_family(["我喜欢猫"], ["我喜欢狗"], rouge_types=["rouge1", "rougeW"], tokenizer="cjk",
                          multi_ref="average", aggregation="rouge155", n_bootstrap=10)
    assert result.aggregate()["rouge1"] == 0.75
    assert 0 < result.scores["rougeW"][0] < 1


def test_registry_cli_parse_and_run():
    from nlgmetrics.registry import get_protocol

    spec = get_protocol("rouge_family")
    option = spec.option("tokenizer")
    assert option.default == "default" and tuple(option.allowed()) == TOKENIZER_NAMES
    assert option.parse("cjk") == "cjk"
    with pytest.raises(ValueError, match="choose one of"):
        option.parse("jieba")
    result = spec.run(["我喜欢猫"], [["我喜欢狗"]], tokenizer="cjk", rouge_types=["rouge1"], n_bootstrap=0)
    assert result.scores["rouge1"] == [0.75]


def test_evaluate_module_takes_the_tokenizer(metrics_dir):
    evaluate = pytest.importorskip("evaluate")
    module = evaluate.load(str(metrics_dir / "rouge_family"))
    for tokenizer in ("cjk", _chars):
        out = module.compute(predictions=["我喜欢猫"], references=["我喜欢狗"], rouge_types=["rouge1"],
                             tokenizer=tokenizer, n_bootstrap=0, return_signature=True)
        assert out["rouge1"] == 0.75
        assert out["signature"] == rouge_family(["我喜欢猫"], ["我喜欢狗"], rouge_types=["rouge1"],
                                                tokenizer=tokenizer, n_bootstrap=0).signature
