"""Dataset loaders for the benchmarks (REALSumm, WebNLG 2020): see benchmarks.meta.data.

This file re-exports the loaders and prints a summary:

    python -m benchmarks.data [--data-dir DIR]
    python -m benchmarks.data --data FILE --doc-key COL --system-key COL --human COL[,COL...]

Public origins (a user with a network can rebuild the JSON Lines files from them):

- REALSumm: https://github.com/neulab/REALSumm (scores_dicts/abs.pkl, scores_dicts/ext.pkl,
  selected_docs_for_human_eval/abs/ptr_generator/src.txt), CC BY 4.0;
- WebNLG 2020: https://github.com/WebNLG/challenge-2020 (submissions/rdf2text/en/*/primary.en,
  evaluation/human-evaluation/results/en/), WebNLG v3.0 test XML with references, and
  https://github.com/WebNLG/GenerationEval (data/correlation/en/human_eval_id_REF.json);
  CC BY-NC-SA 4.0.
"""

import argparse

from benchmarks.meta.data import (  # noqa: F401  (re-exported)
    SOURCES,
    Example,
    default_data_dir,
    linearise_triples,
    load_realsumm,
    load_table_dataset,
    load_webnlg2020,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--data", default=None, help="your own table (csv/tsv/jsonl/json/parquet) instead")
    parser.add_argument("--doc-key", default=None)
    parser.add_argument("--system-key", default=None)
    parser.add_argument("--human", default=None, help="comma list of human-score columns")
    args = parser.parse_args(argv)
    if args.data:
        if not (args.doc_key and args.system_key and args.human):
            parser.error("--data needs --doc-key, --system-key and --human.")
        examples = load_table_dataset(args.data, doc_key=args.doc_key, system_key=args.system_key,
                                      human=[h for h in args.human.split(",") if h])
        print(f"{args.data}: {len(examples)} outputs, {len({e.doc for e in examples})} documents, "
              f"{len({e.system for e in examples})} systems")
        return 0
    for name, loader in (("realsumm", load_realsumm), ("webnlg2020", load_webnlg2020)):
        examples = loader(args.data_dir)
        print(
            f"{name}: {len(examples)} outputs, {len({e.doc for e in examples})} documents, "
            f"{len({e.system for e in examples})} systems; origin: {SOURCES[name]}"
        )
    return 0


if __name__ == "__main__":
    from benchmarks.meta.runner import report_errors

    raise SystemExit(report_errors("python -m benchmarks.data", main))
