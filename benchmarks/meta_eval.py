"""Meta-evaluation of nlgmetrics on REALSumm and WebNLG 2020 (see nlgmetrics.meta.runner).

    python benchmarks/meta_eval.py --metrics text --tag text
    python benchmarks/meta_eval.py --help
"""

import sys

from nlgmetrics.meta.runner import main

if __name__ == "__main__":
    sys.exit(main())
