"""spBLEU: BLEU with sacrebleu's SentencePiece tokenizers, ``tokenize="flores101"`` / ``"flores200"``.

Where the model is available, every face (the metric, sacrebleu's ``corpus_bleu`` /
``sentence_bleu``, :class:`BleuScorer`, the evaluate module, the command line) gives sacrebleu's
numbers and a signature naming the model as sacrebleu's does. The models are tiny ones trained
here and placed where sacrebleu looks (:mod:`tests.support.spm_support`), so nothing is downloaded and the
oracle reads the very file we read. Where it is not available (no ``sentencepiece``, no sacrebleu,
the model file absent and no network, a corrupt file), the error is one line saying what is
missing and how to get it, raised before any text is scored; never sacrebleu's ``SystemExit`` or a
traceback from urllib.
"""

from __future__ import annotations

import io
import json
import ssl
import sys
import urllib.error
import urllib.request

import pytest

from nlgmetrics.bleu import BleuScorer, bleu, corpus_bleu, get_tokenizer, sentence_bleu
from nlgmetrics.core.signature import parse_signature
from tests.support.evaluate_support import sacrebleu_streams
from tests.support.spm_support import model_path, sacrebleu_dir, tiny_flores_models

sacrebleu = pytest.importorskip("sacrebleu")
pytest.importorskip("sentencepiece")
from sacrebleu.metrics import BLEU  # noqa: E402
from sacrebleu.tokenizers import tokenizer_spm  # noqa: E402

NAMES = ["flores101", "flores200"]
HYPOTHESES = ["the cat sat on the mat.", "A dog ran away from home!", "", "   ", "猫がマットの上に座った。",
              "state-of-the-art: 3.5 million words", "Привет, как дела?", "the quick brown fox", "hello world"]
REFERENCES = [["the cat is on the mat.", "a cat sat on the mat"], ["a dog ran far away from home"], ["a b"],
              ["x"], ["猫はマットの上に座っていた。"], ["state of the art models: 3.5 million words", ""],
              ["Привет, как дела?"], ["the quick brown fox jumps over the lazy dog"], ["hello there, world"]]


@pytest.fixture
def models(tmp_path):
    """Both tiny models in sacrebleu's directory while the test runs."""
    with tiny_flores_models(tmp_path) as directory:
        yield directory


@pytest.fixture
def offline(monkeypatch) -> list[str]:
    """Every download fails as it does on a machine without network; the URLs asked for."""
    asked: list[str] = []

    def unreachable(url, *args, **kwargs):
        asked.append(url)
        raise urllib.error.URLError("[Errno 101] Network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", unreachable)
    return asked


# --------------------------------------------------------------------------- the model is available


#: BLEU's tolerance against sacrebleu (as in tests/unit/bleu/test_bleu.py): the n-gram counts are equal, the
#: score may differ in the last bits (100.00000000000004 for 100.0) through the order of operations.
TOLERANCE = 1e-9


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("smooth_method", ["exp", "floor", "none"])
def test_spbleu_equals_sacrebleu_on_every_face(models, name, lowercase, smooth_method):
    options = dict(tokenize=name, lowercase=lowercase, smooth_method=smooth_method)
    streams = sacrebleu_streams(REFERENCES)
    theirs = BLEU(**options).corpus_score(HYPOTHESES, streams)
    result = bleu(HYPOTHESES, REFERENCES, **options)
    assert result.main_score == pytest.approx(theirs.score, abs=TOLERANCE) and list(result.counts) == theirs.counts
    assert (result.sys_len, result.ref_len, list(result.totals)) == (theirs.sys_len, theirs.ref_len, theirs.totals)
    sentence_anchor = BLEU(**options, effective_order=True)
    sentences = [sentence_anchor.sentence_score(h, r).score for h, r in zip(HYPOTHESES, REFERENCES)]
    assert result.scores["sentence_bleu"] == pytest.approx(sentences, abs=TOLERANCE)
    # sacrebleu's functions under their own names and layouts, and the scorer
    same_name = corpus_bleu(HYPOTHESES, streams, smooth_method=smooth_method, lowercase=lowercase, tokenize=name)
    assert same_name.score == result.main_score and same_name.counts == theirs.counts
    assert [sentence_bleu(h, r, smooth_method=smooth_method, lowercase=lowercase, tokenize=name).score
            for h, r in zip(HYPOTHESES, REFERENCES)] == result.scores["sentence_bleu"]
    assert BleuScorer(**options).corpus(HYPOTHESES, REFERENCES).score == result.main_score


@pytest.mark.parametrize("name", NAMES)
def test_signature_names_the_model_as_sacrebleus_does(models, name):
    ours = parse_signature(bleu(HYPOTHESES, REFERENCES, tokenize=name).signature)
    anchor = BLEU(tokenize=name)
    anchor.corpus_score(HYPOTHESES, sacrebleu_streams(REFERENCES))  # sacrebleu signs only after scoring
    theirs = dict(field.split(":", 1) for field in anchor.get_signature().format().split("|"))
    assert ours["tokenize"] == theirs["tok"] == name


def test_each_name_reads_its_own_model(models):
    """The two names tokenize as sacrebleu's tokenizer of the same name, and differently (the
    fixture's models have different vocabularies), so neither name reads the other's file."""
    line = "state-of-the-art models translate the quick brown fox"
    tokens = {name: get_tokenizer(name)(line) for name in NAMES}
    for name in NAMES:
        assert tokens[name] == tokenizer_spm.TokenizerSPM(name)(line).split()
    assert tokens["flores101"] != tokens["flores200"]


def test_evaluate_module_passes_tokenize_and_records_it(models, metrics_dir, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the module loads from its folder
    module = evaluate.load(str(metrics_dir / "bleu"))
    for name in NAMES:
        out = module.compute(predictions=HYPOTHESES, references=REFERENCES, tokenize=name, return_signature=True)
        theirs = BLEU(tokenize=name).corpus_score(HYPOTHESES, sacrebleu_streams(REFERENCES)).score
        assert out["score"] == pytest.approx(theirs, abs=TOLERANCE)
        assert parse_signature(out["signature"])["tokenize"] == name


def test_command_line_option_gives_the_library_result(models, tmp_path):
    from nlgmetrics.apps.cli import main

    preds, refs, out = tmp_path / "p.txt", tmp_path / "r.txt", tmp_path / "out.json"
    hyps = [h for h in HYPOTHESES if h.strip()]
    firsts = [r[0] for h, r in zip(HYPOTHESES, REFERENCES) if h.strip()]
    preds.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    refs.write_text("\n".join(firsts) + "\n", encoding="utf-8")
    status = main(["score", "-p", str(preds), "-r", str(refs), "-m", "bleu", "--option", "bleu.tokenize=flores200",
                   "--json", str(out), "--quiet", "--no-progress"])
    assert status == 0
    got = json.loads(out.read_text(encoding="utf-8"))["metrics"]["bleu"]
    want = bleu(hyps, firsts, tokenize="flores200")
    assert got["aggregate"]["bleu"] == want.main_score and got["signature"] == want.signature


# --------------------------------------------------------------------------- the model is not available


def _one_line(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message.strip(), message
    return message


@pytest.mark.parametrize("name", NAMES)
def test_without_sentencepiece_the_error_says_what_to_install(models, name, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentencepiece", None)  # import fails as when it is not installed
    for call in (lambda: get_tokenizer(name), lambda: bleu(["a"], ["a"], tokenize=name),
                 lambda: corpus_bleu(["a"], [["a"]], tokenize=name)):
        with pytest.raises(ImportError, match=rf"tokenize='{name}' .*sentencepiece.*`pip install sacrebleu sentencepiece`"):
            call()


def test_without_sacrebleu_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sacrebleu.tokenizers.tokenizer_spm", None)
    with pytest.raises(ImportError, match=r"tokenize='flores101' .*sacrebleu.*`pip install sacrebleu sentencepiece`"):
        bleu(["a"], ["a"], tokenize="flores101")


@pytest.mark.parametrize("name", NAMES)
def test_absent_model_offline_names_the_file_the_url_and_the_fix(tmp_path, offline, name):
    with sacrebleu_dir(tmp_path):
        path = model_path(tmp_path, name)
        url = tokenizer_spm.SPM_MODELS[name]["url"]
        with pytest.raises(OSError) as caught:
            bleu(["a"], ["a"], tokenize=name)
        message = _one_line(caught.value)
        assert str(path) in message and url in message and "Network is unreachable" in message
        assert "copy the file to" in message and "$SACREBLEU" in message
        assert offline == [url]  # sacrebleu tried its download, as it would online
        assert not path.exists()


@pytest.mark.parametrize("failure", ["ssl", "cut"])
def test_a_failed_download_is_our_error_and_leaves_no_partial_file(tmp_path, monkeypatch, failure):
    """sacrebleu ends the process (``sys.exit``) on an SSL error, and a download cut mid-way
    leaves an empty model file that would fail every later run: neither may reach the user."""

    class Cut(io.BytesIO):
        def read(self, *args):
            raise ConnectionResetError("connection reset by peer")

    def download(url, *args, **kwargs):
        if failure == "ssl":
            raise ssl.SSLError("certificate verify failed")
        return Cut()

    monkeypatch.setattr(urllib.request, "urlopen", download)
    with sacrebleu_dir(tmp_path):
        reason = "an SSL error" if failure == "ssl" else "ConnectionResetError: connection reset by peer"
        with pytest.raises(OSError, match=rf"could not be downloaded from https://\S+ \({reason}"):
            bleu(["a"], ["a"], tokenize="flores101")
        assert not model_path(tmp_path, "flores101").exists()


def test_a_corrupt_model_file_is_named_with_the_fix(tmp_path, offline):
    path = model_path(tmp_path, "flores200")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"<html>not a model</html>")
    with sacrebleu_dir(tmp_path):
        with pytest.raises(OSError) as caught:
            BleuScorer(tokenize="flores200")
    message = _one_line(caught.value)
    assert str(path) in message and "is not a SentencePiece model" in message and "delete it" in message
    assert offline == []  # a file is there: sacrebleu does not download


def test_command_line_error_is_one_line(tmp_path, offline, capsys):
    from nlgmetrics.apps.cli import main

    text = tmp_path / "t.txt"
    text.write_text("a b\n", encoding="utf-8")
    with sacrebleu_dir(tmp_path / "cache"):
        status = main(["score", "-p", str(text), "-r", str(text), "-m", "bleu", "--option", "bleu.tokenize=flores101",
                       "--quiet", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.strip()]
    assert str(model_path(tmp_path / "cache", "flores101")) in line
