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
