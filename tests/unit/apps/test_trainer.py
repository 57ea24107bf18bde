"""``build_compute_metrics`` inside a real ``Seq2SeqTrainer.evaluate()`` with a tiny random T5.

The model (T5-shaped, a few thousand parameters plus the 30,522-token BERT embedding) is built here
with the real BERT uncased tokenizer and trained for a few steps so that its generations share some
words with the labels (non-zero ROUGE/BLEU, so the comparison can fail). The returned metric values
must equal a direct library call on independently decoded texts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SOURCES = [
    "the cat sat on the mat all day .",
    "a dog barked at the moon last night .",
    "rain fell on the town for a week .",
    "she reads two books every month .",
    "the train left the station at noon .",
    "he painted the old fence bright red .",
]
TARGETS = ["cat sat on mat", "dog barked at moon", "rain fell on town", "she reads books",
           "train left at noon", "he painted fence"]


@pytest.fixture(scope="module")
def tiny_t5_and_tokenizer():
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    from nlgmetrics.testing import bert_tokenizer_dir

    tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=16, d_ff=64, num_layers=1, num_decoder_layers=1,
        num_heads=2, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.cls_token_id,
    )
    return T5ForConditionalGeneration(config), tokenizer


def _dataset(tokenizer):
    from datasets import Dataset

    def encode(batch):
        encoded = tokenizer(batch["source"], truncation=True, max_length=32)
        encoded["labels"] = tokenizer(text_target=batch["target"], truncation=True, max_length=16)["input_ids"]
        return encoded

    raw = Dataset.from_dict({"source": SOURCES, "target": TARGETS})
    return raw.map(encode, batched=True, remove_columns=["source", "target"])


def _decode_reference(tokenizer, text: str) -> str:
    """What decoding the label ids of ``text`` must give (independent of nlgmetrics.apps.trainer)."""
    return tokenizer.decode(tokenizer(text)["input_ids"], skip_special_tokens=True).strip()


@pytest.mark.slow
def test_seq2seq_trainer_evaluate_matches_direct_computation(
    tmp_path, tiny_t5_and_tokenizer, tiny_bert_dir, tiny_gpt2_dir
):
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    from nlgmetrics.apps.trainer import build_compute_metrics
    from nlgmetrics.bleu import bleu
    from nlgmetrics.infolm import infolm
    from nlgmetrics.rouge import rouge_family
    from nlgmetrics.shannon import shannon_score

    model, tokenizer = tiny_t5_and_tokenizer
    dataset = _dataset(tokenizer)
    compute_metrics = build_compute_metrics(
        tokenizer,
        metrics=["rouge_family", "bleu", "infolm", "shannon_score"],
        sources="inputs",
        metric_options={
            "rouge_family": {"rouge_types": ["rouge1", "rougeL"], "n_bootstrap": 100},
            "infolm": {"model": str(tiny_bert_dir), "device": "cpu"},
            "shannon_score": {"model": str(tiny_gpt2_dir), "device": "cpu"},
        },
    )
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=6, per_device_eval_batch_size=4,
        learning_rate=3e-2, max_steps=30, predict_with_generate=True, generation_max_length=8,
        include_for_metrics=["inputs"], report_to=[], use_cpu=True, disable_tqdm=True, save_strategy="no",
        logging_strategy="no", seed=0,
    )
    trainer = Seq2SeqTrainer(
        model=model, args=args, train_dataset=dataset, eval_dataset=dataset,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model), compute_metrics=compute_metrics,
        processing_class=tokenizer,
    )
    trainer.train()
    metrics = trainer.evaluate()

    texts = compute_metrics.last_texts
    predictions = texts["predictions"]
    # Labels (-100 padded across batches of different length) decode to the targets.
    assert texts["references"] == [_decode_reference(tokenizer, t) for t in TARGETS]
    assert texts["sources"] == [_decode_reference(tokenizer, s) for s in SOURCES]
    # Generations are ids (predict_with_generate), decoded without special tokens.
    assert len(predictions) == len(TARGETS) and all(isinstance(p, str) for p in predictions)

    references = texts["references"]
    rouge = rouge_family(predictions, references, rouge_types=["rouge1", "rougeL"], n_bootstrap=100)
    assert metrics["eval_rouge_family_rouge1"] == rouge.aggregate()["rouge1"]
    assert metrics["eval_rouge_family_rougeL"] == rouge.aggregate()["rougeL"]
    assert metrics["eval_rouge_family_rouge1_low"] == rouge.aggregate()["rouge1_low"]
    assert metrics["eval_rouge_family_rouge1"] == pytest.approx(np.mean(rouge.scores["rouge1"]), abs=1e-12)
    assert metrics["eval_rouge_family_rouge1"] > 0  # training made some words match
    corpus = bleu(predictions, references)
    assert metrics["eval_bleu"] == corpus.main_score
    assert metrics["eval_bleu_precision_1"] == corpus.aggregate()["precision_1"] > 0
    info = infolm(predictions, references, model=str(tiny_bert_dir), device="cpu", progress=False)
    assert metrics["eval_infolm"] == pytest.approx(np.mean(info.scores["infolm"]), abs=1e-12)
    shannon = shannon_score(predictions, sources=texts["sources"], model=str(tiny_gpt2_dir), device="cpu",
                            progress=False)
    assert metrics["eval_shannon_score"] == pytest.approx(np.mean(shannon.scores["shannon_score"]), abs=1e-12)
    assert metrics["eval_shannon_score_ll_help"] == pytest.approx(np.mean(shannon.scores["ll_help"]), abs=1e-9)
    signatures = {r.metric: r.signature for r in compute_metrics.last_results}
    assert signatures["bleu"] == corpus.signature and signatures["infolm"] == info.signature
    # every headline number of every result is logged, under a key derived from the result alone
    for result in (rouge, corpus, info, shannon):
        for key in result.aggregate():
            logged = result.metric if key == result.metric else f"{result.metric}_{key}"
            assert f"eval_{logged}" in metrics, (result.metric, key)


def test_decode_replaces_ignore_index_and_validates_shape():
    from transformers import AutoTokenizer

    from nlgmetrics.testing import bert_tokenizer_dir
    from nlgmetrics.apps.trainer import decode_ids

    tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    ids = tokenizer(["hello world", "a"], padding=True)["input_ids"]
    array = np.array(ids)
    array[array == tokenizer.pad_token_id] = -100
    assert decode_ids(tokenizer, array) == ["hello world", "a"]
    assert decode_ids(tokenizer, (array, None)) == ["hello world", "a"]  # generate() tuples
    with pytest.raises(ValueError, match="predict_with_generate"):
        decode_ids(tokenizer, np.zeros((2, 3, 5)))  # logits, not ids


def test_build_compute_metrics_checks_its_arguments():
    from transformers import AutoTokenizer

    from nlgmetrics.testing import bert_tokenizer_dir
    from nlgmetrics.apps.trainer import build_compute_metrics

    tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    with pytest.raises(ValueError, match="sources"):
        build_compute_metrics(tokenizer, metrics=["fflm"])
    with pytest.raises(ValueError, match="Unknown metric"):
        build_compute_metrics(tokenizer, metrics=["meteor"])
    with pytest.raises(ValueError, match="not in metrics"):
        build_compute_metrics(tokenizer, metrics=["bleu"], metric_options={"infolm": {}})
    compute = build_compute_metrics(tokenizer, metrics=["fflm"], sources=["one document"])
    ids = np.array([tokenizer("a summary")["input_ids"]] * 2)
    with pytest.raises(ValueError, match="1 sources but 2 predictions"):
        compute((ids, ids))


@pytest.fixture(scope="module")
def bert_tokenizer():
    from transformers import AutoTokenizer

    from nlgmetrics.testing import bert_tokenizer_dir

    return AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))


@pytest.mark.parametrize("bad_id", [-1, -99, 10**6])
def test_ids_outside_the_vocabulary_are_a_clear_error(bert_tokenizer, bad_id):
    """Labels of another tokenizer, or ids other than the -100 padding: decoded, they would vanish
    or become other words, silently changing the scores."""
    from nlgmetrics.apps.trainer import build_compute_metrics, decode_ids

    ids = np.array([bert_tokenizer("the cat sat")["input_ids"]] * 2)
    labels = ids.copy()
    labels[1, 2] = bad_id
    with pytest.raises(ValueError, match=rf"labels hold id {bad_id} at \[1, 2\].*vocabulary \[0, {len(bert_tokenizer)}\)"):
        decode_ids(bert_tokenizer, labels, "labels")
    compute = build_compute_metrics(bert_tokenizer, metrics=["bleu"])
    with pytest.raises(ValueError, match=rf"labels hold id {bad_id} at \[1, 2\]"):
        compute((ids, labels))
    with pytest.raises(ValueError, match=rf"predictions hold id {bad_id}"):
        compute((labels, ids))


def test_float_ids_and_logits(bert_tokenizer):
    from nlgmetrics.apps.trainer import decode_ids

    ids = np.array([bert_tokenizer("the cat sat")["input_ids"]])
    assert decode_ids(bert_tokenizer, ids.astype(np.float32)) == ["the cat sat"]
    with pytest.raises(ValueError, match="non-integer values"):
        decode_ids(bert_tokenizer, ids + 0.5)
    with pytest.raises(ValueError, match="must be integer token ids"):
        decode_ids(bert_tokenizer, np.array([["a", "b"]]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(st.integers(min_value=999, max_value=29_000), min_size=1, max_size=8),
                     min_size=1, max_size=4))
def test_ignore_index_padding_decodes_like_the_unpadded_rows_property(bert_tokenizer, rows):
    """-100 padding (what the Trainer adds between batches) changes no decoded text."""
    from nlgmetrics.apps.trainer import IGNORE_INDEX, decode_ids

    width = max(map(len, rows)) + 2
    padded = np.array([row + [IGNORE_INDEX] * (width - len(row)) for row in rows])
    want = [bert_tokenizer.decode(row, skip_special_tokens=True).strip() for row in rows]
    assert decode_ids(bert_tokenizer, padded) == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.one_of(st.integers(min_value=-2**40, max_value=-1).filter(lambda v: v != -100), st.integers(min_value=30_522, max_value=2**40)))
def test_any_id_outside_the_vocabulary_is_refused_property(bert_tokenizer, bad):
    from nlgmetrics.apps.trainer import decode_ids

    assert len(bert_tokenizer) == 30_522
    with pytest.raises(ValueError, match=rf"hold id {bad} at \[0, 1\]"):
        decode_ids(bert_tokenizer, np.array([[1996, bad, 4937]], dtype=np.int64))


# --------------------------------------------------------------------------- evaluate's names and the examples' presets
#
# The oracles below are the transformers examples' own compute_metrics (run_summarization.py,
# run_translation.py), with evaluate's modules replaced by what they call: rouge-score's
# RougeScorer (per example, averaged: evaluate's use_aggregator=False; its default aggregator is a
# bootstrap median of the same mean) and sacrebleu's corpus_bleu. Nothing of nlgmetrics is used.

SUMMARY_TARGETS = [
    "The council approved a new library. It opens in 2028 in the old market hall.",
    "Heavy rain flooded the harbour district overnight. Nobody was hurt.",
    "Two sisters won the national bread award. They will train apprentices.",
]
SUMMARY_OUTPUTS = [
    "The city council approved libraries. They open in 2028.",
    "Nobody was hurt. Rain flooded streets in the harbour district overnight.",  # sentences swapped
    "The football club signed a new striker.",
]


def _example_ids(tokenizer, texts, pad_with):
    """Token ids of ``texts`` in one array, padded with ``pad_with`` (-100 as the Trainer pads
    labels and predictions across batches, or the pad id as ``generate`` pads within one)."""
    rows = [tokenizer(text)["input_ids"] for text in texts]
    width = max(map(len, rows)) + 3
    return np.array([row + [pad_with] * (width - len(row)) for row in rows])


def _example_decode(tokenizer, preds, labels):
    """The examples' decoding: -100 to pad, batch_decode without special tokens."""
    if isinstance(preds, tuple):
        preds = preds[0]
    preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
    decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
    labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
    decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
    return preds, decoded_preds, decoded_labels


def summarization_example_metrics(tokenizer, eval_preds, sent_tokenize):
    """run_summarization.py's compute_metrics, evaluate's rouge spelled out with rouge-score."""
    from rouge_score import rouge_scorer

    preds, labels = eval_preds
    preds, decoded_preds, decoded_labels = _example_decode(tokenizer, preds, labels)
    decoded_preds = ["\n".join(sent_tokenize(pred.strip())) for pred in decoded_preds]
    decoded_labels = ["\n".join(sent_tokenize(label.strip())) for label in decoded_labels]
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    scores = [scorer.score(label, pred) for label, pred in zip(decoded_labels, decoded_preds)]
    result = {t: np.mean([score[t].fmeasure for score in scores]) for t in types}
    result = {k: round(v * 100, 4) for k, v in result.items()}
    prediction_lens = [np.count_nonzero(pred != tokenizer.pad_token_id) for pred in preds]
    result["gen_len"] = np.mean(prediction_lens)
    return result


def translation_example_metrics(tokenizer, eval_preds):
    """run_translation.py's compute_metrics, evaluate's sacrebleu spelled out with sacrebleu."""
    import sacrebleu

    preds, labels = eval_preds
    preds, decoded_preds, decoded_labels = _example_decode(tokenizer, preds, labels)
    decoded_preds = [pred.strip() for pred in decoded_preds]
    decoded_labels = [[label.strip()] for label in decoded_labels]
    # evaluate's sacrebleu turns references per example into sacrebleu's streams
    streams = [[refs[i] for refs in decoded_labels] for i in range(len(decoded_labels[0]))]
    result = {"bleu": sacrebleu.corpus_bleu(decoded_preds, streams).score}
    prediction_lens = [np.count_nonzero(pred != tokenizer.pad_token_id) for pred in preds]
    result["gen_len"] = np.mean(prediction_lens)
    return {k: round(v, 4) for k, v in result.items()}


def pysbd_sentences(text):
    import pysbd

    return [s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(text) if s.strip()]


def _punkt_installed():
    import nltk

    try:
        nltk.sent_tokenize("A test. Another one.")
    except LookupError:
        return False
    return True


def _summary_batch(tokenizer):
    preds = _example_ids(tokenizer, SUMMARY_OUTPUTS, tokenizer.pad_token_id)
    preds[0, -1] = -100  # the Trainer's padding between batches
    return preds, _example_ids(tokenizer, SUMMARY_TARGETS, -100)


def test_summarization_preset_is_the_example_with_an_offline_splitter(bert_tokenizer):
    from nlgmetrics.apps.trainer import build_compute_metrics

    eval_preds = _summary_batch(bert_tokenizer)
    expected = summarization_example_metrics(bert_tokenizer, eval_preds, pysbd_sentences)
    got = build_compute_metrics(bert_tokenizer, preset="summarization", sentence_splitter="pysbd")(eval_preds)
    assert list(got) == ["rouge1", "rouge2", "rougeL", "rougeLsum", "gen_len"]
    assert got == expected
    assert all(type(v) is float for v in got.values())
    assert 0 < got["rouge2"] < got["rouge1"] < 100 and got["rougeLsum"] > got["rougeL"]  # sentence lines matter
    # stemming is on: "libraries" matches "library" and "open" "opens", which plain tokens would not
    plain = build_compute_metrics(bert_tokenizer, metrics=["rouge"], metric_options={"rouge": {"n_bootstrap": 0}})
    assert plain(eval_preds)["rouge1"] * 100 < got["rouge1"]
    # a callable splitter is used as the example uses nltk.sent_tokenize
    by_period = build_compute_metrics(bert_tokenizer, preset="summarization",
                                      sentence_splitter=lambda text: text.split(". "))
    assert by_period(eval_preds) == summarization_example_metrics(bert_tokenizer, eval_preds,
                                                                  lambda text: text.split(". "))


def test_summarization_preset_splits_with_punkt_like_the_example(bert_tokenizer):
    """The default splitter is the example's nltk.sent_tokenize; without NLTK's punkt data (as on
    an offline machine) building the preset fails at once, naming both fixes."""
    from nlgmetrics.apps.trainer import build_compute_metrics

    if not _punkt_installed():
        with pytest.raises(ValueError, match=r"punkt.*nltk\.downloader punkt_tab.*sentence_splitter='pysbd'"):
            build_compute_metrics(bert_tokenizer, preset="summarization")
        return
    import nltk

    eval_preds = _summary_batch(bert_tokenizer)
    expected = summarization_example_metrics(bert_tokenizer, eval_preds, nltk.sent_tokenize)
    assert build_compute_metrics(bert_tokenizer, preset="summarization")(eval_preds) == expected


def test_summarization_preset_without_punkt_names_an_advice_that_works(bert_tokenizer, monkeypatch):
    """Without punkt's data the refusal names this function's argument and a value it takes:
    building the preset with exactly the advised keyword succeeds."""
    import re

    import nltk.tokenize

    from nlgmetrics.apps.trainer import build_compute_metrics

    def no_punkt(text, *args, **kwargs):
        raise LookupError("Resource 'punkt_tab' not found.")

    monkeypatch.setattr(nltk.tokenize, "sent_tokenize", no_punkt)
    with pytest.raises(ValueError, match=r"punkt.*nltk\.downloader punkt_tab") as refused:
        build_compute_metrics(bert_tokenizer, preset="summarization")
    advice = re.findall(r"(\w+)='(\w+)'", str(refused.value))
    advice = [(name, value) for name, value in advice if name != "preset"]
    assert advice == [("sentence_splitter", "pysbd")], str(refused.value)
    assert "default" not in str(refused.value).split("pysbd")[-1], "pysbd is not this preset's default"
    name, value = advice[0]
    compute_metrics = build_compute_metrics(bert_tokenizer, preset="summarization", **{name: value})
    assert set(compute_metrics(_summary_batch(bert_tokenizer))) >= {"rouge1", "rougeLsum"}


def test_translation_preset_is_the_example(bert_tokenizer):
    from nlgmetrics.apps.trainer import build_compute_metrics

    targets = ["the cat sat on the mat .", "a dog barked at the moon .", "rain fell on the town ."]
    outputs = ["the cat sat on a mat .", "a dog barked at night .", "it rained on the old town all week ."]
    preds = _example_ids(bert_tokenizer, outputs, -100)  # 9, 8 and 11 ids: gen_len 9.3333 after rounding
    eval_preds = (preds, _example_ids(bert_tokenizer, targets, -100))
    expected = translation_example_metrics(bert_tokenizer, eval_preds)
    got = build_compute_metrics(bert_tokenizer, preset="translation")(eval_preds)
    assert list(got) == ["bleu", "gen_len"] and got == expected and 0 < got["bleu"] < 100
    assert got["gen_len"] == 9.3333 == round(np.mean([len(bert_tokenizer(t)["input_ids"]) for t in outputs]), 4)
    assert all(type(v) is float for v in got.values())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(preset="summarisation"), r"Unknown preset='summarisation'; choose one of \['summarization', 'translation'\]"),
        (dict(preset="summarization", metrics=["rouge"]), r"takes none of \['metrics'\]"),
        (dict(preset="translation", metric_options={"bleu": {}}), r"takes none of \['metric_options'\]"),
        (dict(preset="translation", postprocess=str.lower, per_example=True), r"takes none of \['postprocess', 'per_example'\]"),
        (dict(preset="translation", sources="inputs"), r"takes none of \['sources'\]"),
        (dict(preset="translation", sentence_splitter="pysbd"), r"sentence_splitter is an option of preset='summarization'"),
        (dict(sentence_splitter="pysbd"), r"sentence_splitter is an option of preset='summarization'"),
        (dict(preset="summarization", sentence_splitter="spacy"), r"Unknown sentence splitter 'spacy'"),
    ],
)
def test_presets_refuse_what_they_fix(bert_tokenizer, kwargs, message):
    from nlgmetrics.apps.trainer import build_compute_metrics

    with pytest.raises(ValueError, match=message):
        build_compute_metrics(bert_tokenizer, **kwargs)


def test_evaluate_names_log_their_modules_keys(bert_tokenizer):
    """metrics=["rouge", "sacrebleu", "chrf", "ter"]: our four metrics. rouge and sacrebleu (names
    that are evaluate's only) log what evaluate's modules give, as evaluate.combine would merge
    them; chrf and ter (our names too) log ours. The numbers are rouge-score's and sacrebleu's;
    options under evaluate's names reach the metric."""
    import sacrebleu
    from rouge_score import rouge_scorer

    from nlgmetrics.apps.trainer import build_compute_metrics

    targets = ["the cat sat on the mat", "a dog barked at the moon", "rain fell on the town"]
    outputs = ["the cat sat on a mat", "a dog barked at night", "it rained on the town all week"]
    eval_preds = (_example_ids(bert_tokenizer, outputs, -100), _example_ids(bert_tokenizer, targets, -100))
    theirs = build_compute_metrics(bert_tokenizer, metrics=["rouge", "sacrebleu", "chrf", "ter"],
                                   metric_options={"rouge": {"n_bootstrap": 0}})(eval_preds)
    ours = build_compute_metrics(bert_tokenizer, metrics=["rouge_family", "bleu", "chrf", "ter"],
                                 metric_options={"rouge_family": {"n_bootstrap": 0}})(eval_preds)
    # evaluate's rouge: the F-measure of its four default types and nothing else; evaluate's
    # sacrebleu: score, counts, totals, precisions, bp, sys_len, ref_len (the lists are not logged),
    # then our module's extra numbers; no key is shared, so none is prefixed
    rouge_keys = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    sacrebleu_keys = ["score", "bp", "sys_len", "ref_len", "ratio", "sentence_bleu"]
    ours_too = [key for key in ours if key.split("_")[0] in ("chrf", "ter")]
    assert list(theirs) == rouge_keys + sacrebleu_keys + ours_too, list(theirs)
    assert all(theirs[key] == ours[key] for key in ours_too)
    assert all(type(value) is float for value in theirs.values())
    scorer = rouge_scorer.RougeScorer(rouge_keys)
    for rouge_type in rouge_keys:
        want = np.mean([scorer.score(t, o)[rouge_type].fmeasure for t, o in zip(targets, outputs)])
        assert theirs[rouge_type] == pytest.approx(want, abs=1e-12), rouge_type
    bleu = sacrebleu.corpus_bleu(outputs, [targets])
    assert theirs["score"] == pytest.approx(bleu.score, abs=1e-9)
    assert theirs["bp"] == pytest.approx(bleu.bp, abs=1e-12)
    assert (theirs["sys_len"], theirs["ref_len"]) == (bleu.sys_len, bleu.ref_len)
    assert theirs["chrf"] == pytest.approx(sacrebleu.corpus_chrf(outputs, [targets]).score, abs=1e-9)
    assert theirs["ter"] == pytest.approx(sacrebleu.corpus_ter(outputs, [targets]).score, abs=1e-9)
    char = build_compute_metrics(bert_tokenizer, metrics=["sacrebleu"], metric_options={"sacrebleu": {"tokenize": "char"}})
    want = sacrebleu.corpus_bleu(outputs, [targets], tokenize="char").score
    assert char(eval_preds)["score"] == pytest.approx(want, abs=1e-9) and abs(want - theirs["score"]) > 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(metrics=["rouge", "rouge_family"]), r"metrics names rouge_family twice \('rouge' and 'rouge_family'\)"),
        (dict(metrics=["sacrebleu"], metric_options={"sacrebleu": {}, "bleu": {}}), r"metric_options names bleu twice"),
        (dict(metrics=["bertscore"]), r"Unknown metric 'bertscore'; choose from .*evaluate's names for them \['rouge', 'sacrebleu', 'chrf', 'ter'\]"),
        (dict(metrics=["bleu"], metric_options={"rouge": {}}), r"metric_options names \['rouge'\], which are not in metrics"),
        (dict(metrics=[], ), r"`metrics` is empty"),
        (dict(metrics=[3]), r"Metric names are strings, got int"),
    ],
)
def test_metric_names_errors(bert_tokenizer, kwargs, message):
    from nlgmetrics.apps.trainer import build_compute_metrics

    with pytest.raises(ValueError, match=message):
        build_compute_metrics(bert_tokenizer, **kwargs)


@pytest.mark.slow
def test_seq2seq_trainer_logs_the_summarization_examples_keys(tmp_path, tiny_t5_and_tokenizer):
    """In a real Seq2SeqTrainer: evaluate() logs exactly the example's keys (eval_ prefixed), and
    predict()'s values equal the example's compute_metrics on the same generations."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    from nlgmetrics.apps.trainer import build_compute_metrics

    model, tokenizer = tiny_t5_and_tokenizer
    dataset = _dataset(tokenizer)
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=4, predict_with_generate=True,
        generation_max_length=8, report_to=[], use_cpu=True, disable_tqdm=True, save_strategy="no", seed=0,
    )
    trainer = Seq2SeqTrainer(
        model=model, args=args, eval_dataset=dataset, data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=build_compute_metrics(tokenizer, preset="summarization", sentence_splitter="pysbd"),
        processing_class=tokenizer,
    )
    metrics = trainer.evaluate()
    example_keys = {"rouge1", "rouge2", "rougeL", "rougeLsum", "gen_len"}
    assert {f"eval_{k}" for k in example_keys} <= set(metrics)
    trainers_own = {"eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second",
                    "eval_model_preparation_time", "eval_jit_compilation_time"}
    assert {k for k in metrics if k.startswith("eval_")} - {f"eval_{k}" for k in example_keys} <= trainers_own
    output = trainer.predict(dataset)
    expected = summarization_example_metrics(tokenizer, (output.predictions, output.label_ids), pysbd_sentences)
    assert {k: output.metrics[f"test_{k}"] for k in example_keys} == expected
    assert expected["gen_len"] > 1  # generations were counted (4 per batch, -100 between batches)


def _readme_trainer_section() -> str:
    from tests.support.markdown_examples import REPO_ROOT

    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Trainer hook\n")
    return text[start:text.index("\n## ", start + 1)]


def test_readme_trainer_hook_examples_print_what_they_show():
    """The README section's >>> examples, alone (tests/e2e/test_readme.py runs the whole README, slow)."""
    import doctest
    import re

    from tests.support.markdown_examples import run_doctest

    source = "\n".join(re.findall(r"^```python\n(.*?)^```", _readme_trainer_section(), flags=re.MULTILINE | re.DOTALL))
    test = doctest.DocTestParser().get_doctest(source, {}, "README.md#trainer-hook", "README.md", 0)
    results, ran = run_doctest(test)
    assert ran >= 10 and results.failed == 0, f"{results.failed} of {ran} Trainer hook examples failed"


def test_readme_states_the_trainer_hooks_defaults(bert_tokenizer):
    import inspect

    from nlgmetrics.apps.trainer import DEFAULT_PRESET_SPLITTER, PRESETS, build_compute_metrics, evaluate_names

    section = _readme_trainer_section()
    parameters = inspect.signature(build_compute_metrics).parameters
    assert parameters["per_example"].default is False and "| `per_example` | `False` |" in section
    assert parameters["preset"].default is None and "| `preset` | none |" in section
    assert all(f'"{preset}"' in section for preset in PRESETS)
    assert f'| `sentence_splitter` | `"{DEFAULT_PRESET_SPLITTER}"` |' in section
    assert all(f"`{name}`" in section for name in evaluate_names())
    # metrics=None means what the table says
    assert '| `metrics` | `["rouge_family", "bleu"]` |' in section
    ids = np.array([bert_tokenizer("the cat sat on the mat")["input_ids"]])
    keys = set(build_compute_metrics(bert_tokenizer)((ids, ids)))
    assert {key.split("_")[0] for key in keys} == {"rouge", "bleu"} and "rouge_family_rouge1" in keys
