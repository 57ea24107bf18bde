"""Meta-evaluation of nlgmetrics on REALSumm and WebNLG 2020 (see nlgmetrics.meta.runner).

    python -m benchmarks.meta_eval --metrics text --tag text
    python -m benchmarks.meta_eval --help

The same entry point as ``nlgmetrics meta-eval`` (:func:`nlgmetrics.meta.runner.main`): an error
the user can fix is one line ``python -m benchmarks.meta_eval: error: ...`` and exit status 2.
"""

import sys

from nlgmetrics.meta.runner import COMMAND, main

if __name__ == "__main__":
    sys.exit(main(prog=COMMAND))
