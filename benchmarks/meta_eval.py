"""Meta-evaluation of nlgmetrics on REALSumm and WebNLG 2020 (see nlgmetrics.meta.runner).

    python -m benchmarks.meta_eval --metrics text --tag text
    python -m benchmarks.meta_eval --help
"""

import sys

from nlgmetrics.meta.runner import main

if __name__ == "__main__":
    sys.exit(main())
