"""``build_compute_metrics`` inside a real ``Seq2SeqTrainer.evaluate()`` with a tiny random T5.

The model (T5-shaped, a few thousand parameters plus the 30,522-token BERT embedding) is built here
with the real BERT uncased tokenizer and trained for a few steps so that its generations share some
words with the labels (non-zero ROUGE/BLEU, so the comparison can fail). The returned metric values
must equal a direct library call on independently decoded texts.
"""

from __future__ import annotations

import numpy as np
import pytest

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
    """What decoding the label ids of ``text`` must give (independent of nlgmetrics.trainer)."""
    return tokenizer.decode(tokenizer(text)["input_ids"], skip_special_tokens=True).strip()


@pytest.mark.slow
def test_seq2seq_trainer_evaluate_matches_direct_computation(
    tmp_path, tiny_t5_and_tokenizer, tiny_bert_dir, tiny_gpt2_dir
):
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    from nlgmetrics.bleu import corpus_bleu
    from nlgmetrics.infolm import infolm
    from nlgmetrics.rouge import rouge_scores
    from nlgmetrics.shannon import shannon_score
    from nlgmetrics.trainer import build_compute_metrics

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
    rouge = rouge_scores(predictions, references, rouge_types=["rouge1", "rougeL"], n_bootstrap=100)
    assert metrics["eval_rouge_family_rouge1_fmeasure"] == rouge["aggregate"]["rouge1"]["fmeasure"]["mean"]
    assert metrics["eval_rouge_family_rougeL_fmeasure"] == rouge["aggregate"]["rougeL"]["fmeasure"]["mean"]
    assert metrics["eval_rouge_family_rouge1_fmeasure"] > 0  # training made some words match
    bleu = corpus_bleu(predictions, references)
    assert metrics["eval_bleu_score"] == bleu.score
    assert metrics["eval_bleu_precision_1"] == bleu.precisions[0] > 0
    info = infolm(predictions, references, model=str(tiny_bert_dir), device="cpu", progress=False)
    assert metrics["eval_infolm_infolm"] == pytest.approx(info.mean, abs=1e-12)
    shannon = shannon_score(texts["sources"], predictions, model=str(tiny_gpt2_dir), device="cpu", progress=False)
    assert metrics["eval_shannon_score_shannon_score"] == pytest.approx(np.mean(shannon.shannon_score), abs=1e-12)
    assert metrics["eval_shannon_score_ll_help"] == pytest.approx(np.mean(shannon.ll_help), abs=1e-9)
    signatures = {r.metric: r.signature for r in compute_metrics.last_reports}
    assert signatures["bleu"] == bleu.signature and signatures["infolm"] == info.signature


def test_decode_replaces_ignore_index_and_validates_shape():
    from transformers import AutoTokenizer

    from nlgmetrics.testing import bert_tokenizer_dir
    from nlgmetrics.trainer import decode_ids

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
    from nlgmetrics.trainer import build_compute_metrics

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
