"""bitsandbytes-quantized model objects (4-bit NF4, 8-bit) scored on CPU: every call gives a naive
forward's numbers and leaves the caller's model as it was; a quantized model keeps its own dtype
and an explicit other one is refused naming the fix.

On CPU bitsandbytes rewrites a 4-bit weight on its first forward (a packed layout with bfloat16
block scales) and unpacks it again whenever ``state_dict()`` is read, with a lossy round trip:
reading the model's tensors through ``state_dict()`` on every call changed the numbers from the
second call on. The model needs in-features that are a multiple of bitsandbytes' block size (64).
"""

from __future__ import annotations

import warnings

import pytest
import torch

pytest.importorskip("bitsandbytes", reason="bitsandbytes not installed (the test extra pins it)")

from nlgmetrics.engine import load_lm  # noqa: E402
from nlgmetrics.shannon import shannon_score  # noqa: E402
from tests.support.oracles.fflm_naive import naive_fflm  # noqa: E402
from tests.support.oracles.shannon_naive import naive_shannon_totals  # noqa: E402
from tests.support.quantized_calls import assert_calls_score_as_naive  # noqa: E402

DOCUMENT = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMMARY = "Jack bought milk and honey."


@pytest.fixture(scope="module")
def llama64_dir(tmp_path_factory):
    """A random Llama of hidden size 64 (bitsandbytes' CPU 4-bit kernel needs 64 in-features), SmolLM2 vocab."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from nlgmetrics.testing import load_test_tokenizer

    tokenizer = load_test_tokenizer("llama")
    config = LlamaConfig(
        vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=128, max_position_embeddings=256,
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("llama64")
    LlamaForCausalLM(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def _quantized(path, bits: int, dtype: torch.dtype | None = None):
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    if bits == 4:
        config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                    bnb_4bit_compute_dtype=dtype or torch.float32)
    else:
        config = BitsAndBytesConfig(load_in_8bit=True)
    options = {} if dtype is None else {"dtype": dtype}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AutoModelForCausalLM.from_pretrained(str(path), quantization_config=config, device_map="cpu", **options)


def _tokenizer(path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path))


def _raw(value, depth: int = 0):
    """The bytes, dtype and shape of a tensor (read without its subclass's code), or the public
    attributes of an object holding tensors (a quantization state), recursively."""
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            data = value.data if isinstance(value, torch.nn.Parameter) else value
            plain = data if type(data) is torch.Tensor else data.as_subclass(torch.Tensor)
            content = plain.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
            attributes = {k: _raw(v, depth + 1) for k, v in vars(value).items()
                          if not k.startswith("_") and not isinstance(v, torch.nn.Module)}
        return (str(plain.dtype), tuple(plain.shape), content, attributes)
    if isinstance(value, (list, tuple)):
        return [_raw(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _raw(v, depth + 1) for k, v in value.items()}
    if hasattr(value, "__dict__") and not isinstance(value, (torch.nn.Module, type)) and depth < 4:
        return {k: _raw(v, depth + 1) for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value) if isinstance(value, (int, float, str, bool, type(None), torch.dtype)) else type(value).__name__


def _raw_state(model: torch.nn.Module) -> dict:
    """Every parameter's and buffer's raw bytes with its attributes, and every module's public
    non-module attributes (bitsandbytes keeps quantization states and int8 tables there)."""
    state = {f"tensor {name}": _raw(tensor) for name, tensor in
             [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]}
    for path, module in model.named_modules():
        state[f"module {path}"] = {k: _raw(v) for k, v in vars(module).items()
                                   if not k.startswith("_") and k != "training" and not isinstance(v, torch.nn.Module)}
    return state


@pytest.mark.parametrize("bits", [4, 8])
def test_three_calls_score_as_a_naive_forward_and_leave_the_model_as_it_was(llama64_dir, bits):
    model, oracle_model, tokenizer = _quantized(llama64_dir, bits), _quantized(llama64_dir, bits), _tokenizer(llama64_dir)
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bitsandbytes' 8-bit casts its inputs to float16, and says so on every call
        totals = naive_shannon_totals(oracle_model, tokenizer, DOCUMENT, SUMMARY, start=start)
        _, [fflm_scores] = naive_fflm(oracle_model, tokenizer, [DOCUMENT], [SUMMARY], bos=tokenizer.bos_token_id)
        # The model's own first forward rewrites its layout on CPU (4-bit packing): the state the
        # engine must leave as it is, is the one after that forward.
        naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=start)
        before = _raw_state(model)
        assert_calls_score_as_naive(model, tokenizer, SUMMARY, DOCUMENT, totals, fflm_scores)
    after = _raw_state(model)
    assert after.keys() == before.keys()
    assert [key for key in before if after[key] != before[key]] == []


@pytest.mark.parametrize("bits", [4, 8])
def test_a_quantized_objects_fingerprint_is_the_same_in_every_process(llama64_dir, bits):
    """transformers' quantizer keeps the modules it left unquantized as a list made from a set:
    another process (another string hash seed) holds it in another order. The same weights must
    keep one key there, or the store never serves them; the options themselves stay covered."""
    from nlgmetrics.engine.fingerprints import module_fingerprint

    model = _quantized(llama64_dir, bits)
    skipped = model.hf_quantizer.modules_to_not_convert
    assert len(set(skipped)) > 1  # two orders are possible
    fingerprint = module_fingerprint(model)
    model.hf_quantizer.modules_to_not_convert = list(reversed(skipped))  # as another process may hold it
    assert module_fingerprint(model) == fingerprint
    model.config.quantization_config.llm_int8_threshold += 1.0  # an option the 8-bit forward reads
    assert module_fingerprint(model) != fingerprint


def test_a_quantized_model_scores_in_its_own_dtype_and_another_is_refused_naming_the_fix(llama64_dir):
    model, tokenizer = _quantized(llama64_dir, 4, dtype=torch.bfloat16), _tokenizer(llama64_dir)
    dtypes = {name: p.dtype for name, p in model.named_parameters()}
    lm = load_lm(model, "causal", model_tokenizer=tokenizer)
    assert lm.dtype == torch.bfloat16 and lm.model is model  # neither cast nor copied
    default = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
    explicit = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, dtype="bfloat16",
                             progress=False)
    assert "|dtype:bfloat16|" in default.signature
    assert default.scores["ll_help"] == explicit.scores["ll_help"]
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    totals = naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=start)
    for name in ("base", "help", "full"):  # bfloat16 activations: batching moves the sums by rounding only
        assert default.scores[f"ll_{name}"][0] == pytest.approx(totals[name], rel=2e-3), name
    with pytest.raises(ValueError, match=r"quantized and computes in bfloat16.*dtype='float32': pass dtype=None"):
        shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, dtype="float32", progress=False)
    assert {name: p.dtype for name, p in model.named_parameters()} == dtypes


def test_a_lora_on_a_4bit_model_scores_as_its_naive_forward(llama64_dir):
    """QLoRA: the adapter's layers wrap quantized ones; the engine runs them in the wrapped model."""
    peft = pytest.importorskip("peft", reason="peft not installed (the test extra pins it)")
    model = peft.get_peft_model(_quantized(llama64_dir, 4), peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"],
                                                                            lora_dropout=0.0))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)
    model.eval()
    tokenizer = _tokenizer(llama64_dir)
    totals = naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=tokenizer.convert_tokens_to_ids("<|endoftext|>"))
    for _ in range(2):
        result = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
        for name in ("base", "help", "full"):
            assert abs(result.scores[f"ll_{name}"][0] - totals[name]) < 1e-4, name
    assert "+lora(default)|" in result.signature
