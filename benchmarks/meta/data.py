"""Human-judgment datasets for meta-evaluation, read through ``datasets.load_dataset("json")``.

Both loaders return a list of :class:`Example` (one system output for one input item, with its
human scores), from a local directory: the ``data_dir`` argument, else ``$NLGMETRICS_DATA``,
else ``../shared/data`` next to the repository. Files and their public origin:

**REALSumm** (``realsumm/realsumm.jsonl``, 100 CNN/DailyMail test documents x 25 systems):
Bhandari et al. (2020), "Re-evaluating Evaluation in Text Summarization", EMNLP 2020,
https://github.com/neulab/REALSumm (CC BY 4.0). Human scores and summaries:
``scores_dicts/abs.pkl`` and ``scores_dicts/ext.pkl``; articles:
``selected_docs_for_human_eval/abs/ptr_generator/src.txt`` (line *i* = ``doc_id`` *i*).
Human score: ``litepyramid_recall``.

**WebNLG 2020** English RDF-to-text (``webnlg2020/humeval_en.jsonl``, 178 items x 17 systems):
Castro Ferreira et al. (2020), "The 2020 Bilingual, Bi-Directional WebNLG+ Shared Task",
https://github.com/WebNLG/challenge-2020 (outputs: ``submissions/rdf2text/en/<team>/primary.en``;
human scores: ``evaluation/human-evaluation/results/en/``; test set with references: WebNLG
v3.0 ``rdf-to-text-generation-test-data-with-refs-en.xml``), and
https://github.com/WebNLG/GenerationEval (``data/correlation/en/human_eval_id_REF.json``).
Corpus: CC BY-NC-SA 4.0. Criteria: Correctness, DataCoverage, Fluency, Relevance, TextStructure.
For the ``WebNLG-2020-reference`` pseudo-system the rated text *is* one of the references; it is
removed from that row's references (otherwise reference-based metrics would see a perfect match).

A user with a network converts those sources with the schema of ``../shared/data/README.md``
(one JSON object per line) and points ``--data-dir`` / ``$NLGMETRICS_DATA`` at the folder.

>>> examples = load_realsumm(max_docs=1)   # doctest: +SKIP
>>> len(examples), examples[0].human["litepyramid_recall"] >= 0   # doctest: +SKIP
(25, True)
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REALSUMM_FILE = "realsumm/realsumm.jsonl"
WEBNLG_FILE = "webnlg2020/humeval_en.jsonl"
REALSUMM_HUMAN = ("litepyramid_recall",)
WEBNLG_CRITERIA = ("Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure")
WEBNLG_REFERENCE_SYSTEM = "WebNLG-2020-reference"

SOURCES = {
    "realsumm": "https://github.com/neulab/REALSumm (scores_dicts/abs.pkl, scores_dicts/ext.pkl, "
    "selected_docs_for_human_eval/abs/ptr_generator/src.txt)",
    "webnlg2020": "https://github.com/WebNLG/challenge-2020 (submissions/rdf2text/en, "
    "evaluation/human-evaluation/results/en) + WebNLG v3.0 test XML with references",
}


@dataclass(frozen=True)
class Example:
    """One system output for one input item, with its human scores.

    ``key`` is ``(doc, system)``: unique within a dataset and stable across runs. It is a tuple,
    never the two ids joined into one string (a document ``x|y`` with system ``A`` and a document
    ``x`` with system ``y|A`` are two outputs); score files store it as :func:`key_text`.
    ``source`` is the input the output was generated from: the article (REALSumm) or the
    triples linearised as ``subject | predicate | object`` lines (WebNLG).
    """

    key: tuple[str, ...]
    doc: str
    system: str
    split: str
    prediction: str
    references: tuple[str, ...]
    source: str
    human: dict[str, float] = field(hash=False, compare=False)


def default_data_dir() -> Path:
    """``$NLGMETRICS_DATA`` or ``<repo>/../shared/data``."""
    env = os.environ.get("NLGMETRICS_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"  # <repo>/benchmarks/meta/data.py


def _load_jsonl(data_dir: str | os.PathLike | None, relative: str, dataset: str):
    from benchmarks.meta.tablefile import read_table

    root = Path(data_dir) if data_dir is not None else default_data_dir()
    path = root / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"{dataset}: {path} not found. Pass --data-dir (or set NLGMETRICS_DATA) to the folder "
            f"holding {relative}; public origin: {SOURCES[dataset]}."
        )
    return read_table(path)  # a malformed line is named there


def _first_docs(docs_in_order: list, max_docs: int | None) -> set:
    if max_docs is not None and max_docs < 1:
        raise ValueError(f"max_docs={max_docs}; use a positive number or None for all documents.")
    ordered = sorted(set(docs_in_order))
    return set(ordered if max_docs is None else ordered[:max_docs])


def load_realsumm(data_dir: str | os.PathLike | None = None, max_docs: int | None = None) -> list[Example]:
    """REALSumm rows; ``max_docs`` keeps the documents with the smallest ``doc_id``.

    ``system`` is ``"<abs|ext>:<name>"`` because ``bart_out`` exists in both pools.
    """
    table = _load_jsonl(data_dir, REALSUMM_FILE, "realsumm")
    keep = _first_docs(table["doc_id"], max_docs)
    examples = []
    for row in table:
        if row["doc_id"] not in keep:
            continue
        system = f"{row['system_type']}:{row['system']}"
        examples.append(
            Example(
                key=(str(row["doc_id"]), system),
                doc=str(row["doc_id"]),
                system=system,
                split=row["system_type"],
                prediction=row["prediction"],
                references=(row["reference"],),
                source=row["document"] or "",
                human={"litepyramid_recall": float(row["litepyramid_recall"])},
            )
        )
    return examples


def linearise_triples(triples: list[list[str]]) -> str:
    """``subject | predicate | object`` per line, underscores shown as spaces (as raters saw them).

    >>> linearise_triples([["John_Blaha", "birthPlace", "San_Antonio"]])
    'John Blaha | birthPlace | San Antonio'
    """
    return "\n".join(" | ".join(part.replace("_", " ") for part in triple) for triple in triples)


def _rater_z_scores(table) -> dict[int, dict[str, float]]:
    """Per-row mean of per-rater z-scores (each rater normalised over all their ratings)."""
    by_rater: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in table:
        for rating in row["ratings"]:
            for c in WEBNLG_CRITERIA:
                by_rater[rating["rater"]][c].append(float(rating[c]))
    stats = {}
    for rater, crit in by_rater.items():
        for c, values in crit.items():
            n = len(values)
            mean = sum(values) / n
            sd = (sum((v - mean) ** 2 for v in values) / n) ** 0.5
            stats[(rater, c)] = (mean, sd)
    out = {}
    for i, row in enumerate(table):
        scores = {}
        for c in WEBNLG_CRITERIA:
            zs = []
            for rating in row["ratings"]:
                mean, sd = stats[(rating["rater"], c)]
                # A rater who always gave the same score carries no ranking information.
                zs.append((float(rating[c]) - mean) / sd if sd > 0 else 0.0)
            scores[c] = sum(zs) / len(zs)
        out[i] = scores
    return out


def load_webnlg2020(
    data_dir: str | os.PathLike | None = None,
    max_docs: int | None = None,
    human: str = "raw",
) -> list[Example]:
    """WebNLG 2020 English human-evaluation rows; ``max_docs`` keeps the smallest ``sample_id``s.

    ``human="raw"`` uses the raters' mean 0-100 scores; ``human="z"`` the mean of per-rater
    z-scores (the organisers' ranking scores). The reference pseudo-system's own text is removed
    from its references; a row left with no reference keeps ``references=()``.
    """
    from nlgmetrics.core.validation import check_choice

    check_choice("human", human, ("raw", "z"))
    table = _load_jsonl(data_dir, WEBNLG_FILE, "webnlg2020")
    keep = _first_docs(table["sample_id"], max_docs)
    z = _rater_z_scores(table) if human == "z" else None
    examples = []
    for i, row in enumerate(table):
        if row["sample_id"] not in keep:
            continue
        references = list(row["references"])
        if row["prediction_is_reference"] and row["prediction"] in references:
            references.remove(row["prediction"])  # only the one occurrence that was rated
        scores = z[i] if z is not None else {c: float(row[c]) for c in WEBNLG_CRITERIA}
        examples.append(
            Example(
                key=(str(row["sample_id"]), row["system"]),
                doc=str(row["sample_id"]),
                system=row["system"],
                split="all",
                prediction=row["prediction"],
                references=tuple(references),
                source=linearise_triples(row["triples"]),
                human=scores,
            )
        )
    return examples


LOADERS = {"realsumm": load_realsumm, "webnlg2020": load_webnlg2020}
HUMAN_KEYS = {"realsumm": REALSUMM_HUMAN, "webnlg2020": WEBNLG_CRITERIA}

#: Columns that identify one output in each built-in dataset (what a ``--scores`` file must carry),
#: and how they make :attr:`Example.key`.
KEY_COLUMNS = {"realsumm": ("doc_id", "system_type", "system"), "webnlg2020": ("sample_id", "system")}


def key_from_parts(dataset: str, parts: tuple[str, ...]) -> tuple[str, ...]:
    """:attr:`Example.key` from the values of :data:`KEY_COLUMNS` (or a generic ``(doc, system)``).

    >>> key_from_parts("realsumm", ("3", "abs", "bart_out")), key_from_parts("mine", ("d|1", "sysA"))
    (('3', 'abs:bart_out'), ('d|1', 'sysA'))
    """
    if dataset == "realsumm":
        doc, system_type, system = parts
        return doc, f"{system_type}:{system}"
    doc, system = parts
    return doc, system


def key_text(key: tuple[str, ...] | str) -> str:
    """The text a key is stored under in score files (the cache, the committed scores).

    ``doc|system`` wherever that reads back as one key, which is where the document id holds no
    ``|`` and does not start with ``[`` (every committed score file: their ids are numbers); else
    the key as a JSON array. A JSON array starts with ``[`` and the other form cannot, and the
    other form reads back by its first ``|``: two keys never share a text, and
    :func:`parse_key_text` reads either. A key that is already a string (callers that build
    examples by hand) is kept as it is.

    >>> key_text(("3", "abs:bart_out")), key_text(("x|y", "A")), key_text(("x", "y|A"))
    ('3|abs:bart_out', '["x|y", "A"]', 'x|y|A')
    """
    if isinstance(key, str):
        return key
    if len(key) == 2 and "|" not in key[0] and not key[0].startswith("["):
        return f"{key[0]}|{key[1]}"
    return json.dumps(list(key), ensure_ascii=False)


def parse_key_text(text: str) -> tuple[str, ...]:
    """The key of a :func:`key_text` (without the cache's ``#`` content hash).

    >>> parse_key_text("3|abs:bart_out"), parse_key_text('["x|y", "A"]'), parse_key_text("x|y|A")
    (('3', 'abs:bart_out'), ('x|y', 'A'), ('x', 'y|A'))
    """
    if text.startswith("["):
        try:
            parts = json.loads(text)
        except json.JSONDecodeError:
            parts = None
        if isinstance(parts, list) and parts and all(isinstance(p, str) for p in parts):
            return tuple(parts)
    else:
        doc, sep, system = text.partition("|")
        if sep:
            return doc, system
    raise ValueError(f"{text!r} is not a stored example key (doc|system or a JSON array of ids); "
                     f"the score file is not one the meta-evaluation wrote.")


def _references(value, where: str, empty_is_missing: bool) -> tuple[str, ...]:
    """One text or a list of texts (each as :func:`~benchmarks.meta.tablefile.as_text` reads it);
    a missing value or an empty list is refused: the row would silently drop out of every
    reference-based metric."""
    from benchmarks.meta.tablefile import as_text

    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{where}: an empty list of references; give at least one reference text or remove the row.")
        return tuple(as_text(v, f"{where}: reference {k}", empty_is_missing) for k, v in enumerate(value, start=1))
    return (as_text(value, where, empty_is_missing),)


def load_table_dataset(
    path: str | os.PathLike,
    *,
    doc_key: str,
    system_key: str,
    human: tuple[str, ...] | list[str],
    prediction_key: str | None = None,
    reference_key: str | None = None,
    source_key: str | None = None,
    split_key: str | None = None,
    max_docs: int | None = None,
) -> list[Example]:
    """Any human-judgment table (csv/tsv/jsonl/json/parquet, read by ``datasets``) as examples.

    One row per (document, system) output; ``human``: the columns of human scores (finite numbers);
    ``reference_key``: a text or a list of texts per row; ``split_key``: an optional column whose
    values become splits (tables are made per split and for ``all``). ``max_docs`` keeps the first
    documents in sorted order. Key: ``(doc, system)`` (what a ``--scores`` file joins on).

    Texts (prediction, references, source) are what the file holds as written, a number included
    (see :mod:`benchmarks.meta.tablefile`), and so are the ids (``007`` and ``7`` are two documents). A
    kept row with a missing text, key or score, or an empty list of references, is refused: a ValueError naming the file, the row and the column.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "h.jsonl"
    >>> _ = path.write_text('{"d": 1, "s": "a", "out": 0, "ref": ["y"], "q": 3}\\n')
    >>> [(e.key, e.prediction, e.references) for e in load_table_dataset(
    ...     path, doc_key="d", system_key="s", human=["q"], prediction_key="out", reference_key="ref")]
    [(('1', 'a'), '0', ('y',))]
    """
    from benchmarks.meta.tablefile import as_text, check_columns, finite_number, is_csv, key_cells, read_table, text_cells

    human = tuple(human)
    if not human:
        raise ValueError("--human: name at least one column of human scores, e.g. --human overall.")
    table = read_table(path)
    needed = [doc_key, system_key, *human] + [k for k in (prediction_key, reference_key, source_key, split_key) if k]
    check_columns(table, needed, path, "see --doc-key/--system-key/--human/--prediction-key/--reference-key/--source-key/--split-key")

    def where(i: int, column: str) -> str:
        return f"{path} row {i + 1} column {column!r}"

    # Ids are texts as written (``007`` is not ``7``), read like the text columns.
    ids = key_cells(table, path, [doc_key, system_key] + ([split_key] if split_key else []))
    docs, systems = ids[doc_key], ids[system_key]
    texts = text_cells(table, path, [k for k in (prediction_key, reference_key, source_key) if k])
    empty_is_missing = is_csv(path)
    keep = _first_docs(docs, max_docs)
    examples, seen = [], {}
    for i, row in enumerate(table):
        doc, system = docs[i], systems[i]
        if doc not in keep:
            continue
        key = (doc, system)
        if key in seen:
            raise ValueError(
                f"{path}: rows {seen[key] + 1} and {i + 1} both have {doc_key}={doc!r}, {system_key}={system!r}; "
                f"each (document, system) must appear once."
            )
        seen[key] = i
        examples.append(
            Example(
                key=key,
                doc=doc,
                system=system,
                split=ids[split_key][i] if split_key else "all",
                prediction=as_text(texts[prediction_key][i], where(i, prediction_key), empty_is_missing)
                if prediction_key else "",
                references=_references(texts[reference_key][i], where(i, reference_key), empty_is_missing)
                if reference_key else (),
                source=as_text(texts[source_key][i], where(i, source_key), empty_is_missing) if source_key else "",
                human={h: finite_number(row[h], f"{path} row {i + 1} column {h!r}") for h in human},
            )
        )
    if not examples:
        raise ValueError(f"{path}: no rows; the file must have one row per (document, system) output.")
    return examples
