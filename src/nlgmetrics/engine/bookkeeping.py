"""The bookkeeping every LM metric needs around the engine: distinct queries registered once, a
progress bar over the examples of a whole call, and warnings counted over a call and issued once.

- :class:`QueryRegistry`: a metric registers each (prefix, target) or (ids, positions) it needs;
  identical ones get the same number and run once.
- :class:`ExampleProgress`: a bar that counts *examples* over the whole call, advanced in
  proportion to the engine queries done for the current chunk of examples.
- :class:`WarnOnce`: counts each kind of event (a cut summary, a truncated text) over the whole
  call, then :meth:`WarnOnce.emit` issues one warning per kind that happened.

>>> registry = QueryRegistry(lambda key: ("query", key))
>>> registry.add((1, 2)), registry.add((3,)), registry.add((1, 2))
(0, 1, 0)
>>> registry.queries
[('query', (1, 2)), ('query', (3,))]
>>> counts = WarnOnce()
>>> counts.add("cut", 2)
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     counts.emit({"cut": "{count} text(s) were cut."})
>>> [str(w.message) for w in caught]
['2 text(s) were cut.']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from tqdm.auto import tqdm

K = TypeVar("K", bound=Hashable)
Q = TypeVar("Q")


class QueryRegistry(Generic[K, Q]):
    """Distinct queries, numbered in order of first registration (see the module docstring)."""

    def __init__(self, build: Callable[[K], Q]):
        self._build = build
        self._index: dict[K, int] = {}
        self.queries: list[Q] = []

    def add(self, key: K) -> int:
        """The number of ``key``'s query, building it the first time ``key`` is seen."""
        number = self._index.get(key)
        if number is None:
            number = self._index[key] = len(self.queries)
            self.queries.append(self._build(key))
        return number

    def __len__(self) -> int:
        return len(self.queries)


class ExampleProgress:
    """A progress bar over the examples of a whole call (see the module docstring).

    >>> with ExampleProgress(4, "toy", enabled=False) as bar:
    ...     done = list(bar.track([10, 11, 12], examples=2, queries=3))
    >>> done, bar.count
    ([10, 11, 12], 2)
    """

    def __init__(self, total: int, desc: str, *, enabled: bool, store: Any = None):
        self.count = 0
        self._store = store  # an engine.store.Store: the bar says how many queries it answered
        self._bar = tqdm(total=total, desc=desc, unit="example", disable=not enabled or total == 0)

    def __enter__(self) -> ExampleProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()

    def _advance(self, count: int) -> None:
        if count > 0:
            if self._store is not None:
                looked_up = self._store.hits + self._store.misses
                self._bar.set_postfix_str(f"{self._store.hits}/{looked_up} queries from the store", refresh=False)
            self._bar.update(count)
            self.count += count

    def track(self, results: Iterable[Any], examples: int, queries: int) -> Iterator[Any]:
        """Pass ``results`` (one per query of a chunk of ``examples`` examples, ``queries`` of them)
        through, advancing the bar in proportion; the chunk's examples are all counted once
        ``results`` is exhausted."""
        start, done = self.count, 0
        for item in results:
            done += 1
            self._advance(start + examples * done // max(queries, 1) - self.count)
            yield item
        self._advance(start + examples - self.count)


class WarnOnce:
    """Counters of warning-worthy events over one call; one warning per kind at the end."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, kind: str, count: int = 1) -> None:
        """Count ``count`` more events of ``kind``."""
        if count:
            self.counts[kind] = self.counts.get(kind, 0) + int(count)

    def emit(self, messages: Mapping[str, str], *, stacklevel: int = 3, **fields: Any) -> None:
        """One warning per kind that happened: ``messages[kind].format(count=..., **fields)``."""
        for kind, template in messages.items():
            count = self.counts.get(kind, 0)
            if count:
                warnings.warn(template.format(count=count, **fields), stacklevel=stacklevel)
