"""``python -m benchmarks.speed``: every metric against its anchor in one run (``side_by_side.py``)."""

from benchmarks.speed.side_by_side import main

if __name__ == "__main__":
    raise SystemExit(main())
