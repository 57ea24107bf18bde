"""Meta-evaluation of nlgmetrics on REALSumm, WebNLG 2020 or your own table (see benchmarks.meta.runner).

    python -m benchmarks.meta_eval --metrics text --tag text
    python -m benchmarks.meta_eval --help

The same entry point as ``nlgmetrics meta-eval`` (:func:`benchmarks.meta.runner.main`): an error
the user can fix is one line ``python -m benchmarks.meta_eval: error: ...`` and exit status 2.
"""

import sys
from pathlib import Path

if not __package__:  # run as `python benchmarks/meta_eval.py` (older results' commands): the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.meta.runner import COMMAND, main  # noqa: E402  (after the path above)

if __name__ == "__main__":
    sys.exit(main(prog=COMMAND))
