"""A PEFT ``PeftModel`` scores like any model: the LM head runs at the target positions only, the
LoRA layers apply (numbers of a naive forward of the PeftModel), the signature names the active
adapter, and a prompt-learning adapter (which the engine would silently drop) is refused."""

from __future__ import annotations

import pytest
import torch

peft = pytest.importorskip("peft", reason="peft not installed (the test extra pins it)")

from nlgmetrics.engine import CausalQuery, causal_target_scores, load_lm  # noqa: E402
from nlgmetrics.shannon import shannon_score  # noqa: E402
from nlgmetrics.testing import load_test_tokenizer  # noqa: E402
from tests.support.oracles.shannon_naive import naive_shannon_totals  # noqa: E402

DOCUMENT = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMMARY = "Jack bought milk and honey."


def _lora_llama(path, task_type: str | None = None):
    """The tiny Llama with a LoRA on q_proj / v_proj whose B matrices are random (non-zero)."""
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                             task_type=task_type)
    model = peft.get_peft_model(base, config)
    torch.manual_seed(1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)
    return model.eval()


def _head_rows(model) -> list[tuple[int, ...]]:
    """The leading shape of every input the LM head gets from now on (its hook stays registered)."""
    shapes: list[tuple[int, ...]] = []
    model.get_base_model().lm_head.register_forward_hook(lambda _m, args, _out: shapes.append(tuple(args[0].shape[:-1])))
    return shapes


@pytest.mark.parametrize("task_type", [None, "CAUSAL_LM"])  # PeftModel, PeftModelForCausalLM
def test_the_head_runs_at_the_target_positions_only_with_the_lora_applied(tiny_llama_dir, task_type):
    model = _lora_llama(tiny_llama_dir, task_type)
    tokenizer = load_test_tokenizer("llama")
    bos = tokenizer.bos_token_id
    targets = [tuple(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in (DOCUMENT, SUMMARY)]
    queries = [CausalQuery((bos,), targets[0]), CausalQuery((bos, *targets[1]), targets[0][:5]), CausalQuery((bos,), targets[1])]
    lm = load_lm(model, "causal", model_tokenizer=tokenizer)
    shapes = _head_rows(model)
    scores = causal_target_scores(lm, queries, progress=False)
    assert shapes and all(shape[0] == 1 for shape in shapes)  # gathered rows, never [batch, seq]
    assert sum(shape[1] for shape in shapes) == sum(len(q.target_ids) for q in queries)
    for query, got in zip(queries, scores):  # oracle: the PeftModel's own full forward
        ids = torch.tensor([query.prefix_ids + query.target_ids[:-1]])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, len(query.prefix_ids) - 1 :].double()
        expected = torch.log_softmax(logits, -1)[torch.arange(len(query.target_ids)), list(query.target_ids)]
        assert torch.allclose(torch.as_tensor(got.logprobs, dtype=torch.float64), expected, atol=1e-4, rtol=0)


def test_shannon_of_a_peft_model_matches_its_naive_forward_and_names_the_adapter(tiny_llama_dir):
    model = _lora_llama(tiny_llama_dir)
    tokenizer = load_test_tokenizer("llama")
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    adapted = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
    totals = naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=start)
    with model.disable_adapter():
        plain = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
        plain_totals = naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=start)
    for name in ("base", "help", "full"):
        assert abs(adapted.scores[f"ll_{name}"][0] - totals[name]) < 1e-4, name
        assert abs(plain.scores[f"ll_{name}"][0] - plain_totals[name]) < 1e-4, name
    assert abs(totals["full"] - plain_totals["full"]) > 1e-2  # the LoRA changes the numbers
    assert "+lora(default)|" in adapted.signature and "+lora(default)-disabled|" in plain.signature


def test_a_prompt_learning_adapter_is_refused_naming_the_fix(tiny_llama_dir):
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_llama_dir)).eval()
    model = peft.get_peft_model(base, peft.PromptTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=4))
    with pytest.raises(ValueError, match="prompt-learning adapter .* pass a LoRA-style adapter, or the base model"):
        load_lm(model, "causal", model_tokenizer=load_test_tokenizer("llama"))
