"""What the store (``cache_dir=``) saves, and what it costs, for every LM metric on REALSumm.

Four LM metrics (Shannon, FFLM, BLANC-help, InfoLM) score the summaries of a few REALSumm
documents system by system, as one does when a new system arrives: call 1 scores system A's
summaries of the documents, call 2 system B's summaries of the same documents. With a store, the
work call 2 shares with call 1 (everything about a document alone, InfoLM's references) is read,
not recomputed. Measured, per metric (SmolLM2-135M, the offline ``smollm2-135m``, for Shannon, FFLM
and InfoLM; BLANC needs a masked LM: the random BERT-shaped model of :mod:`benchmarks.random_models`):

1. system by system: call 2 with the store (a fresh folder, call 1 then call 2 in it) against
   call 2 without one (after call 1 without one): seconds and forward work (passes, positions,
   real tokens, counted by :func:`benchmarks.counting.count_work`); the scores must agree within
   the engine's float32 batch invariance (1e-5 relative, the tolerance the tests and the cards
   state: the store's call 2 runs its misses in other batches) and the signatures must be identical;
2. the same call 2 again with the same store: seconds and forward passes (none expected);
3. the lookup cost when nothing is stored: call 1 into a fresh empty folder against call 1
   without a store;
4. the store's size on disk per 1,000 scored summaries;
5. kill and resume (Shannon): a child process scoring 10 documents is killed (SIGKILL) once the
   store holds about half the entries of an uninterrupted run, then run again to completion.

Sections 1-3 are interleaved over ``--repeats`` rounds (the median is reported) after one untimed warm-up
call per metric, so load on a shared machine hits both sides alike. ``$NLGMETRICS_CACHE_DIR`` is
unset for the run: ``cache_dir=None`` must mean no store.

    python -m benchmarks.studies.store --docs 5 --repeats 3 --out benchmarks/results/speed_store/speed_store.md

Where the store's scores differ from a call's without one at all, the run also
measures how far float32 batching alone moves them (call 2 without a store, ``batch_size=1``
against the default batching); ``--batch-variance`` runs that check alone and appends it to
``--out`` (the committed results: ``--batch-variance --metrics fflm --docs 5`` after the command
above, before the check joined the run).

A quick end-to-end check: ``python -m benchmarks.studies.store --docs 2 --resume-docs 2 --repeats 1
--out /tmp/speed_store.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.counting import WorkCounts, count_work
from benchmarks.harness import ROOT, report_head
from benchmarks.random_models import cached_random_model
from benchmarks.realsumm_slices import realsumm_by_document

DEFAULT_DATA = harness.realsumm_file()
RESULTS = harness.result_path("speed_store")

METRICS = ("shannon", "fflm", "blanc_help", "infolm")
#: call 2 with the store / call 2 without, at most (seconds and real forward tokens)
SECOND_CALL_TARGETS = {"shannon": 0.40, "fflm": 0.75, "blanc_help": 0.60, "infolm": 0.60}
REPEAT_TARGET = 0.05  # the same call again / cold
LOOKUP_TARGET = 1.05  # call 1 into an empty store / call 1 without a store
SCORE_RTOL = 1e-5  # float32 batch invariance, as tests/unit/engine/test_store.py and the cards
DEFAULT_SYSTEMS = ("presumm_out_abs", "t5_out_large")  # two abstractive systems: different summaries
STORE_FILES = ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm")


# ------------------------------------------------------------------------------------------------
# the data


@dataclass(frozen=True)
class Slice:
    """The documents of the run and, aligned with them, each system's summary and the reference."""

    doc_ids: list[int]
    documents: list[str]
    summaries_a: list[str]
    summaries_b: list[str]
    references: list[str]


def system_row(rows: list[dict], system: str) -> dict:
    """The one row of ``system`` (``name`` or ``name/type``: REALSumm has a ``bart_out`` of each type)."""
    name, _, kind = system.partition("/")
    found = [r for r in rows if r["system"] == name and (not kind or r["system_type"] == kind)]
    if len(found) != 1:
        raise ValueError(f"system {system!r}: {len(found)} rows for doc_id {rows[0]['doc_id']}; "
                         "write it as name/abs or name/ext.")
    return found[0]


def shortest_slice(data: str | os.PathLike, n_docs: int, system_a: str, system_b: str) -> Slice:
    """The ``n_docs`` shortest REALSumm documents (in characters; keeps the run short) with the
    summaries of two systems and the reference summary."""
    by_doc = realsumm_by_document(data)
    ids = sorted(by_doc, key=lambda d: (len(by_doc[d][0]["document"]), d))[:n_docs]
    a = [system_row(by_doc[d], system_a) for d in ids]
    b = [system_row(by_doc[d], system_b) for d in ids]
    return Slice(ids, [r["document"] for r in a], [r["prediction"] for r in a], [r["prediction"] for r in b],
                 [r["reference"] for r in a])


# ------------------------------------------------------------------------------------------------
# the metrics


@dataclass(frozen=True)
class MetricSetup:
    """How to call one metric: the model argument it gets (a name, as a user passes it), the kind
    :func:`~nlgmetrics.engine.load_lm` loads it as, and ``call(summaries, slice, cache_dir, **options)``."""

    name: str
    model: str
    kind: str
    call: Callable[..., Any]


def metric_setup(name: str, dtype: str, bert_size: str) -> MetricSetup:
    """The call of metric ``name`` in ``dtype``; BLANC gets the random BERT of ``bert_size``."""
    common = dict(progress=False, dtype=dtype)
    if name == "shannon":
        from nlgmetrics.shannon import shannon_score

        return MetricSetup(name, "smollm2-135m", "causal", lambda s, sl, cache, **extra: shannon_score(
            s, sl.documents, model="smollm2-135m", cache_dir=cache, **common, **extra))
    if name == "fflm":
        from nlgmetrics.fflm import fflm

        return MetricSetup(name, "smollm2-135m", "causal", lambda s, sl, cache, **extra: fflm(
            s, sl.documents, model="smollm2-135m", cache_dir=cache, **common, **extra))
    if name == "blanc_help":
        from nlgmetrics.blanc import blanc

        path = str(cached_random_model("bert", bert_size)[0])
        return MetricSetup(name, path, "masked", lambda s, sl, cache, **extra: blanc(
            s, sl.documents, variant="help", model=path, cache_dir=cache, **common, **extra))
    if name == "infolm":
        from nlgmetrics.infolm import infolm

        # predictions: the system's summaries; references: the same reference summaries in both calls
        return MetricSetup(name, "smollm2-135m", "causal", lambda s, sl, cache, **extra: infolm(
            s, sl.references, model="smollm2-135m", cache_dir=cache, **common, **extra))
    raise ValueError(f"unknown metric {name!r}; choose from {METRICS}")


def steal_seconds() -> float:
    """CPU time the hypervisor gave to other guests so far, all CPUs (``/proc/stat``; 0 where absent):
    one of the things that move a call's wall time on a shared virtual machine."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass
class Call:
    """One timed and counted metric call: wall seconds, this process's CPU seconds (all threads;
    less sensitive than wall time to other work on the machine), CPU seconds stolen by the
    hypervisor meanwhile, the forward work, the scores and the signature."""

    seconds: float
    cpu_seconds: float
    steal_seconds: float
    hits: int
    misses: int
    forwards: int
    positions: int
    real: int
    passes: list[tuple[int, int, int]]
    scores: dict[str, list[float]]
    signature: str


@contextmanager
def store_lookups() -> Iterator[list[tuple[int, int]]]:
    """``(hits, misses)`` of every store closed meanwhile. The store lives inside the metric call
    and every call closes its own, so its counters are read there, just before it closes."""
    from nlgmetrics.engine.store import Store

    seen: list[tuple[int, int]] = []
    original = Store.close

    def close(self: Store) -> None:
        seen.append((self.hits, self.misses))
        original(self)

    Store.close = close  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        Store.close = original  # type: ignore[method-assign]


@contextmanager
def announced(lm: Any, counts: WorkCounts) -> Iterator[None]:
    """Print a JSON line as each pass starts (the work started so far, that pass included) and as
    each store write commits: what a killed child did before it died can be read from its stdout."""
    from nlgmetrics.engine.store import Store

    def started(*_: Any) -> None:
        print(json.dumps({"started": {"forwards": counts.forwards, "positions": counts.positions,
                                      "real": counts.real}}), flush=True)

    original = Store.put

    def put(self: Store, namespace: str, items: Any, description: str = "") -> None:
        items = list(items)
        original(self, namespace, items, description)
        print(json.dumps({"stored": len(items), "after": counts.real}), flush=True)

    # registered after count_work's own hook, so it sees the counts with this pass added
    handle = getattr(lm.model, "base_model", lm.model).register_forward_pre_hook(started)
    Store.put = put  # type: ignore[method-assign]
    try:
        yield
    finally:
        Store.put = original  # type: ignore[method-assign]
        handle.remove()


def timed_call(setup: MetricSetup, lm: Any, summaries: list[str], data: Slice, cache_dir: Path | None,
               announce: bool = False, **options: Any) -> Call:
    """Run one call under :func:`count_work` (the metric's own ``load_lm`` returns ``lm``'s model);
    ``announce``: also print each pass and store write as it happens (:func:`announced`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # length/truncation notes, the same with and without a store
        with count_work(lm) as counts, store_lookups() as lookups, \
                (announced(lm, counts) if announce else nullcontext()):
            steal, cpu, start = steal_seconds(), time.process_time(), time.perf_counter()
            result = setup.call(summaries, data, cache_dir, **options)
            seconds = time.perf_counter() - start
            cpu, steal = time.process_time() - cpu, steal_seconds() - steal
    scores = {k: [float(v) for v in values] for k, values in result.scores.items()}
    hits, misses = sum(h for h, _ in lookups), sum(m for _, m in lookups)
    passes = [(p.rows, p.width, p.real) for p in counts.passes]
    return Call(seconds, cpu, steal, hits, misses, counts.forwards, counts.positions, counts.real, passes, scores,
                result.signature)


def score_diff(got: dict[str, list[float]], expected: dict[str, list[float]]) -> tuple[float, float, bool]:
    """``(max abs diff, max relative diff, every value within SCORE_RTOL relative)`` over all
    columns; two NaNs agree, and equal values agree (0 vs 0 too)."""
    if set(got) != set(expected):
        return math.inf, math.inf, False
    worst_abs = worst_rel = 0.0
    ok = True
    for column in expected:
        if len(got[column]) != len(expected[column]):
            return math.inf, math.inf, False
        for a, b in zip(got[column], expected[column]):
            if a == b or (math.isnan(a) and math.isnan(b)):
                continue
            diff = abs(a - b)
            rel = diff / max(abs(a), abs(b))
            worst_abs, worst_rel = max(worst_abs, diff), max(worst_rel, rel)
            ok = ok and rel <= SCORE_RTOL
    return worst_abs, worst_rel, ok


# ------------------------------------------------------------------------------------------------
# the store on disk


def store_files(folder: Path) -> dict[str, int]:
    """Bytes of each of the store's files present in ``folder``."""
    return {name: (folder / name).stat().st_size for name in STORE_FILES if (folder / name).exists()}


def stored_entries(folder: Path) -> int:
    """Entries in the store of ``folder``, read-only (safe while another process writes; 0 before
    the file exists or while it cannot be read)."""
    path = folder / STORE_FILES[0]
    if not path.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1)) as db:
            return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
    except sqlite3.Error:
        return 0


def stored_value_bytes(folder: Path) -> int:
    """Bytes of the stored values (what the size cap counts), read-only."""
    path = folder / STORE_FILES[0]
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0])


# ------------------------------------------------------------------------------------------------
# sections 1-4: one metric, in one process


def measure_metric(setup: MetricSetup, data: Slice, repeats: int, dtype: str, scratch: Path) -> dict[str, Any]:
    """Sections 1-4 for one metric. Each round: call 1 and call 2 without a store, and, in a fresh
    folder, call 1, call 2 and call 2 again; odd rounds run the store's calls first, so that drift
    within a round favours neither side. Seconds are medians over the rounds; forward work is that
    of the last round (the same in every round)."""
    from nlgmetrics.engine import load_lm

    lm = load_lm(setup.model, setup.kind, dtype=dtype)
    # untimed warm-up (first-pass allocation, lazy imports): the first document only, no store
    warmup = timed_call(setup, lm, data.summaries_a[:1], _first(data), None)
    rounds: list[dict[str, Call]] = []
    folder = scratch
    entries: dict[str, int] = {}
    for r in range(repeats):
        calls: dict[str, Call] = {}
        folder = scratch / f"{setup.name}-round{r}"

        def without_store() -> None:
            calls["cold_1"] = timed_call(setup, lm, data.summaries_a, data, None)
            calls["cold_2"] = timed_call(setup, lm, data.summaries_b, data, None)

        def with_store() -> None:
            calls["store_1"] = timed_call(setup, lm, data.summaries_a, data, folder)
            entries["after call 1"] = stored_entries(folder)
            calls["store_2"] = timed_call(setup, lm, data.summaries_b, data, folder)
            entries["after call 2"] = stored_entries(folder)
            calls["store_2_again"] = timed_call(setup, lm, data.summaries_b, data, folder)
            entries["after call 2 again"] = stored_entries(folder)

        for part in ((without_store, with_store) if r % 2 == 0 else (with_store, without_store)):
            part()
        rounds.append(calls)
        print(json.dumps({"metric": setup.name, "round": r,
                          **{k: [round(c.seconds, 2), round(c.cpu_seconds, 2), round(c.steal_seconds, 2), c.real]
                             for k, c in calls.items()}}), flush=True)
    if load_lm(setup.model, setup.kind, dtype=dtype).model is not lm.model:
        raise RuntimeError(f"{setup.name}: the metric's load_lm gave another model: the counts would miss its passes.")
    last = rounds[-1]
    if last["cold_2"].forwards == 0:
        raise RuntimeError(f"{setup.name}: no forward pass counted on a call without a store: the hooks missed the model.")
    abs_2, rel_2, ok_2 = score_diff(last["store_2"].scores, last["cold_2"].scores)
    abs_r, rel_r, ok_r = score_diff(last["store_2_again"].scores, last["cold_2"].scores)
    abs_1, rel_1, ok_1 = score_diff(last["store_1"].scores, last["cold_1"].scores)
    return {
        "metric": setup.name, "model": setup.model, "kind": setup.kind, "rounds": repeats,
        "warmup": {"seconds": warmup.seconds, "real": warmup.real},
        "seconds": {k: statistics.median(c[k].seconds for c in rounds) for k in last},
        "cpu_seconds": {k: statistics.median(c[k].cpu_seconds for c in rounds) for k in last},
        "seconds_rounds": {k: [round(c[k].seconds, 2) for c in rounds] for k in last},
        "steal_seconds": sum(c.steal_seconds for calls in rounds for c in calls.values()),
        "wall_seconds": sum(c.seconds for calls in rounds for c in calls.values()),
        "work": {k: {"forwards": c.forwards, "positions": c.positions, "real": c.real, "hits": c.hits,
                     "misses": c.misses} for k, c in last.items()},
        "same_work_every_round": all(
            (c[k].forwards, c[k].positions, c[k].real) == (last[k].forwards, last[k].positions, last[k].real)
            for c in rounds for k in last),
        "diff_call2": {"max_abs": abs_2, "max_rel": rel_2, "ok": ok_2},
        "diff_again": {"max_abs": abs_r, "max_rel": rel_r, "ok": ok_r},
        "diff_call1": {"max_abs": abs_1, "max_rel": rel_1, "ok": ok_1},
        "same_signature": last["store_2"].signature == last["cold_2"].signature
        and last["store_2_again"].signature == last["cold_2"].signature
        and last["store_1"].signature == last["cold_1"].signature,
        "signature": last["cold_2"].signature,
        "entries": entries, "store_files": store_files(folder), "value_bytes": stored_value_bytes(folder),
        "summaries_stored": 2 * len(data.doc_ids),
    }


def _first(data: Slice) -> Slice:
    return Slice(data.doc_ids[:1], data.documents[:1], data.summaries_a[:1], data.summaries_b[:1], data.references[:1])


def batch_variance(setup: MetricSetup, data: Slice, dtype: str) -> dict[str, Any]:
    """Call 2 without a store twice: default batching and one sequence per batch (``batch_size=1``).
    How far float32 moves a score when only the batches change: the yardstick for a store whose
    call 2 batches its remaining work differently from a call without one."""
    from nlgmetrics.engine import load_lm

    lm = load_lm(setup.model, setup.kind, dtype=dtype)
    default = timed_call(setup, lm, data.summaries_b, data, None)
    single = timed_call(setup, lm, data.summaries_b, data, None, batch_size=1)
    columns = {k: score_diff({k: single.scores[k]}, {k: default.scores[k]})[:2] for k in default.scores}
    return {"metric": setup.name, "columns": columns, "passes": (default.forwards, single.forwards)}


def render_batch_variance(rows: list[dict[str, Any]], results: list[dict[str, Any]] | None = None,
                          command: str = "") -> list[str]:
    """The markdown of :func:`batch_variance` rows (``results``: section 1's numbers, to set beside them)."""
    lines = [
        "",
        "## Float32 batch invariance, without a store",
        "",
        "Call 2 (system B) without a store, with the default batching against `batch_size=1` (one sequence "
        "per pass): what changing only the batches does to a score in float32. A store's call 2 runs the "
        "remaining work in other batches than a call without one, so its scores may move as much"
        + (f". Command: `{command}`." if command else "."),
        "",
        "| metric | column | passes (default / batch_size=1) | max abs diff | max rel diff |",
        "|---|---|---:|---:|---:|",
    ]
    for row in rows:
        for column, (abs_diff, rel_diff) in row["columns"].items():
            lines.append(f"| {row['metric']} | {column} | {row['passes'][0]} / {row['passes'][1]} | "
                         f"{abs_diff:.3g} | {rel_diff:.3g} |")
    for r in results or []:
        if any(r["metric"] == row["metric"] for row in rows):
            lines.append(f"\nWith the store vs without (section 1), {r['metric']}: max abs diff "
                         f"{r['diff_call2']['max_abs']:.3g}, max rel diff {r['diff_call2']['max_rel']:.3g}.")
    return lines


# ------------------------------------------------------------------------------------------------
# section 5: kill and resume (Shannon), in child processes


def child(cache_dir: str, n_docs: int, system: str, data: str, dtype: str) -> None:
    """The child process: Shannon on system ``system``'s summaries of the ``n_docs`` shortest
    documents into ``cache_dir``; prints a line per pass and store write as they happen, and at the
    end one JSON line (seconds in the call, forward work, store lookups, scores)."""
    from nlgmetrics.engine import load_lm

    setup = metric_setup("shannon", dtype, "small")
    chosen = shortest_slice(data, n_docs, system, system)
    lm = load_lm(setup.model, setup.kind, dtype=dtype)
    call = timed_call(setup, lm, chosen.summaries_a, chosen, Path(cache_dir), announce=True)
    print(json.dumps({"seconds": call.seconds, "cpu_seconds": call.cpu_seconds, "forwards": call.forwards,
                      "positions": call.positions, "real": call.real, "hits": call.hits, "misses": call.misses,
                      "passes": call.passes, "scores": call.scores, "signature": call.signature}), flush=True)


def killed_work(stdout: str) -> dict[str, int]:
    """From a killed child's lines: the work it started (``started``: the pass under way at the
    kill included), the work whose results reached the store (``stored_real``), and the rest
    (``in_flight_real``: started, never written).

    The engine writes each unit's results one unit late (it reads unit k's results once unit k+1
    has run, so that a device is never idle), so a write made after some passes holds the unit that
    ended at the previous write; a write with no pass since the previous one is the flush at the
    end of an engine run and holds the unit that just ended. Where the previous write closed
    another engine run, this counts the unit as not written (the in-flight work is then an upper
    bound)."""
    started = {"forwards": 0, "positions": 0, "real": 0}
    stored_real = 0
    previous_write: int | None = None
    passes_since_write = 0
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by the kill
        if "started" in event:
            started = event["started"]
            passes_since_write += 1
        elif "stored" in event:
            if passes_since_write == 0:
                stored_real = event["after"]
            elif previous_write is not None:
                stored_real = previous_write
            previous_write, passes_since_write = event["after"], 0
    return {**started, "stored_real": stored_real, "in_flight_real": started["real"] - stored_real}


def _child_command(cache_dir: Path, n_docs: int, system: str, data: str, dtype: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.studies.store", "--child", str(cache_dir), "--resume-docs", str(n_docs),
            "--systems", system, system, "--data", data, "--dtype", dtype]


def _run_child(command: list[str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds and the JSON the child printed (its last line)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=_child_env())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}): {done.stderr[-3000:]}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NLGMETRICS_CACHE_DIR", None)
    return env


def kill_and_resume(n_docs: int, system: str, data: str, dtype: str, scratch: Path, poll_s: float = 0.05) -> dict[str, Any]:
    """An uninterrupted child into a fresh folder; then a child killed once its folder holds half
    the uninterrupted run's final entries, and the same child again to completion."""
    full_dir, resumed_dir = scratch / "uninterrupted", scratch / "killed-then-resumed"
    full_wall, full = _run_child(_child_command(full_dir, n_docs, system, data, dtype))
    full_entries = stored_entries(full_dir)
    goal = max(1, full_entries // 2)

    log = scratch / "killed-child.log"
    start = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(_child_command(resumed_dir, n_docs, system, data, dtype), cwd=ROOT,
                                   stdout=out, stderr=subprocess.DEVNULL, env=_child_env())
    entries_seen = 0
    while process.poll() is None:
        entries_seen = stored_entries(resumed_dir)
        # a safety net: kill at 3 x T even if the entries never reach half
        if entries_seen >= goal or time.perf_counter() - start > 3 * full_wall:
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(poll_s)
    process.wait()
    killed_wall = time.perf_counter() - start
    killed_by_us = process.returncode == -signal.SIGKILL
    entries_at_kill = stored_entries(resumed_dir)
    killed = killed_work(log.read_text())

    resume_wall, resumed = _run_child(_child_command(resumed_dir, n_docs, system, data, dtype))
    abs_d, rel_d, ok = score_diff(resumed["scores"], full["scores"])
    return {
        "docs": n_docs, "system": system, "killed_by_signal": killed_by_us,
        "full_wall": full_wall, "full_call_s": full["seconds"], "full_entries": full_entries,
        "full_work": {k: full[k] for k in ("forwards", "positions", "real")},
        "kill_goal_entries": goal, "entries_seen_at_kill": entries_seen, "entries_after_kill": entries_at_kill,
        "killed_wall": killed_wall, "resume_wall": resume_wall, "resume_call_s": resumed["seconds"],
        "resume_work": {k: resumed[k] for k in ("forwards", "positions", "real", "hits", "misses")},
        "killed_work": killed,
        "entries_after_resume": stored_entries(resumed_dir),
        "diff": {"max_abs": abs_d, "max_rel": rel_d, "ok": ok},
        "same_signature": resumed["signature"] == full["signature"],
    }


# ------------------------------------------------------------------------------------------------
# the report


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.inf


def render(results: list[dict[str, Any]], resume: dict[str, Any] | None, data: Slice, systems: tuple[str, str],
           command: str, bert_size: str, dtype: str, variance: list[dict[str, Any]] | None = None) -> str:
    """The markdown report."""
    lines = [
        *report_head("The store (`cache_dir=`): what a second call saves, and what the lookup costs",
                     __doc__.split("\n\n")[0].replace("\n", " "), command),
        f"- data: REALSumm, the {len(data.doc_ids)} shortest documents (doc_ids {data.doc_ids}); "
        f"system A = `{systems[0]}`, system B = `{systems[1]}`; InfoLM: predictions = the system's "
        "summaries, references = the documents' reference summaries (the same in both calls)",
        f"- models ({dtype}): SmolLM2-135M (`smollm2-135m`, causal) for Shannon, FFLM and InfoLM; "
        f"BLANC-help: random BERT-shaped weights, `build_random_model('bert', size='{bert_size}')` "
        "(via benchmarks.random_models; a masked LM is needed, and the cost of a pass does not depend "
        "on the weights' values)",
        f"- timing: one untimed warm-up call per metric (first document, no store), then "
        f"{results[0]['rounds'] if results else 0} round(s) of: call 1 and call 2 without a store, and in a "
        "fresh folder call 1, call 2, call 2 again (odd rounds: the store's calls first); seconds are "
        "medians over the rounds, wall clock ('s') and this process's CPU time over all threads ('CPU s', "
        "less sensitive to other work on the machine); forward work (passes / positions incl. padding / "
        "real tokens, `benchmarks.counting.count_work` hooked on the model the metric's own `load_lm` "
        "returns, checked) is the last round's",
        "- warm-up calls (first document, system A, first call of each metric in the process): "
        + ", ".join(f"{r['metric']} {r['warmup']['seconds']:.1f} s for {r['warmup']['real']} real tokens" for r in results),
        "- noise: the machine is a 2-vCPU virtual machine; CPU time stolen by the hypervisor during the "
        "timed calls: " + ", ".join(f"{r['metric']} {r['steal_seconds']:.1f} s of {r['wall_seconds']:.0f} s"
                                     for r in results),
        "",
        "## 1. System by system: call 2 with the store vs without",
        "",
        "Target: call 2 with the store at most the given share of call 2 without one (time; the real-token "
        f"ratio is shown beside it). Scores within {SCORE_RTOL:g} relative, identical signatures.",
        "",
        "| metric | cold s (rounds) | store s (rounds) | time ratio | CPU s ratio | cold passes / positions / real "
        "| store passes / positions / real | store hits / misses | real-token ratio | target | time | tokens "
        "| max abs diff | scores | signature |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|",
    ]
    for r in results:
        cold, store = r["work"]["cold_2"], r["work"]["store_2"]
        t_ratio = _ratio(r["seconds"]["store_2"], r["seconds"]["cold_2"])
        k_ratio = _ratio(store["real"], cold["real"])
        target = SECOND_CALL_TARGETS[r["metric"]]
        lines.append(
            f"| {r['metric']} | {r['seconds']['cold_2']:.2f} ({r['seconds_rounds']['cold_2']}) "
            f"| {r['seconds']['store_2']:.2f} ({r['seconds_rounds']['store_2']}) | {t_ratio:.0%} "
            f"| {_ratio(r['cpu_seconds']['store_2'], r['cpu_seconds']['cold_2']):.0%} "
            f"| {cold['forwards']} / {cold['positions']} / {cold['real']} "
            f"| {store['forwards']} / {store['positions']} / {store['real']} | {store['hits']} / {store['misses']} "
            f"| {k_ratio:.0%} | ≤ {target:.0%} "
            f"| {_verdict(t_ratio <= target)} | {_verdict(k_ratio <= target)} | {r['diff_call2']['max_abs']:.3g} "
            f"| {'within 1e-5' if r['diff_call2']['ok'] else '**DIFFER**'} | {'same' if r['same_signature'] else '**DIFFER**'} |")
    lines += [
        "",
        "## 2. The same call 2 again, same store",
        "",
        f"Target: at most {REPEAT_TARGET:.0%} of call 2 without a store, and no forward pass.",
        "",
        "| metric | cold s | again s | ratio | target | met / missed | forward passes | max abs diff vs cold |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in results:
        ratio = _ratio(r["seconds"]["store_2_again"], r["seconds"]["cold_2"])
        forwards = r["work"]["store_2_again"]["forwards"]
        lines.append(f"| {r['metric']} | {r['seconds']['cold_2']:.2f} | {r['seconds']['store_2_again']:.3f} | "
                     f"{ratio:.1%} | ≤ {REPEAT_TARGET:.0%} | {_verdict(ratio <= REPEAT_TARGET and forwards == 0)} | "
                     f"{forwards} | {r['diff_again']['max_abs']:.3g} |")
    lines += [
        "",
        "## 3. Lookup cost when nothing is stored: call 1 into an empty folder vs without a store",
        "",
        f"Target: at most {LOOKUP_TARGET - 1:.0%} slower. Per-round seconds show the noise.",
        "",
        "| metric | no store s (rounds) | empty store s (rounds) | ratio | CPU s ratio | target | met / missed "
        "| same work | max abs diff |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for r in results:
        ratio = _ratio(r["seconds"]["store_1"], r["seconds"]["cold_1"])
        same_work = all(r["work"]["store_1"][k] == r["work"]["cold_1"][k] for k in ("forwards", "positions", "real"))
        lines.append(f"| {r['metric']} | {r['seconds']['cold_1']:.2f} ({r['seconds_rounds']['cold_1']}) | "
                     f"{r['seconds']['store_1']:.2f} ({r['seconds_rounds']['store_1']}) | {ratio:.3f} | "
                     f"{_ratio(r['cpu_seconds']['store_1'], r['cpu_seconds']['cold_1']):.3f} | ≤ {LOOKUP_TARGET:.2f} | "
                     f"{_verdict(ratio <= LOOKUP_TARGET)} | {'yes' if same_work else 'no'} | "
                     f"{r['diff_call1']['max_abs']:.3g} |")
    lines += [
        "",
        "## 4. Store size",
        "",
        "After call 1, call 2 and call 2 again in one folder (each call closes its store, so sqlite has "
        "checkpointed its WAL; files as found). Per 1,000 summaries = bytes / summaries scored x 1000; "
        "'value bytes' is what the size cap counts (the rest: keys, checksums, sqlite pages and indexes). "
        "InfoLM's store also holds the references' bags (one entry per distinct text).",
        "",
        "| metric | summaries scored | entries (after call 1 / call 2 / again) | files | folder bytes | value bytes "
        "| folder MB per 1,000 summaries | values MB per 1,000 summaries |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        total = sum(r["store_files"].values())
        e = r["entries"]
        files = ", ".join(f"{k} {v}" for k, v in r["store_files"].items())
        lines.append(f"| {r['metric']} | {r['summaries_stored']} | {e['after call 1']} / {e['after call 2']} / "
                     f"{e['after call 2 again']} | {files} | {total} | {r['value_bytes']} | "
                     f"{total / r['summaries_stored'] * 1000 / 1e6:.2f} | "
                     f"{r['value_bytes'] / r['summaries_stored'] * 1000 / 1e6:.2f} |")
    if resume is not None:
        lines += _resume_lines(resume)
    if variance:
        lines += render_batch_variance(variance, results)
    lines += ["", "## Notes", "", *_notes(results, resume), ""]
    return "\n".join(lines)


def _resume_lines(r: dict[str, Any]) -> list[str]:
    full, resumed, killed = r["full_work"], r["resume_work"], r["killed_work"]
    saved = full["real"] - resumed["real"]
    both = r["killed_wall"] + r["resume_wall"]
    total = killed["real"] + resumed["real"]
    bound = full["real"] + killed["in_flight_real"]
    return [
        "",
        "## 5. Kill and resume (Shannon)",
        "",
        f"A child process (`python -m benchmarks.studies.store --child DIR ...`) scores system `{r['system']}`'s "
        f"summaries of the {r['docs']} shortest documents into a fresh folder. Uninterrupted: {r['full_entries']} "
        f"entries at the end. A second child, into another fresh folder, is killed with SIGKILL once a read-only "
        f"poll of its store sees ≥ {r['kill_goal_entries']} entries (seen: {r['entries_seen_at_kill']}; stored "
        f"after the kill: {r['entries_after_kill']}; killed by the signal: {'yes' if r['killed_by_signal'] else 'NO'}), "
        "then the same child runs again to completion in that folder. Wall times include the process "
        "start and the model load; 'in call' is the metric call alone. The killed child printed a line as "
        "each pass started and as each store write committed, so its work is known up to the kill: "
        "'started' counts the pass under way at the kill; 'stored' is the work behind the entries written; "
        "'in flight' is the rest. The engine writes a unit's results one unit late (it reads them once the "
        "next unit has run), so a kill loses the unit running and the one before it.",
        "",
        "| run | wall s | in call s | passes | positions | real tokens |",
        "|---|---:|---:|---:|---:|---:|",
        f"| uninterrupted (T) | {r['full_wall']:.2f} | {r['full_call_s']:.2f} | {full['forwards']} | "
        f"{full['positions']} | {full['real']} |",
        f"| killed part (started) | {r['killed_wall']:.2f} | – | {killed['forwards']} | {killed['positions']} | "
        f"{killed['real']} (stored {killed['stored_real']}, in flight {killed['in_flight_real']}) |",
        f"| resumed | {r['resume_wall']:.2f} | {r['resume_call_s']:.2f} | {resumed['forwards']} | "
        f"{resumed['positions']} | {resumed['real']} |",
        "",
        f"- target: killed work + resumed work ≤ uninterrupted + the units in flight: {killed['real']} + "
        f"{resumed['real']} = {total} real tokens vs {full['real']} + {killed['in_flight_real']} = {bound}: "
        f"{_verdict(total <= bound)} (work done twice: {total - full['real']} real tokens)",
        f"- the resumed run found {resumed['hits']} of {resumed['hits'] + resumed['misses']} lookups stored and "
        f"ran {resumed['real']} real tokens, {saved} ({_ratio(saved, full['real']):.0%}) fewer than T; "
        f"{_ratio(r['entries_after_kill'], r['full_entries']):.0%} of the final entries were stored before the kill",
        f"- killed part + resume: {both:.2f} s wall vs T = {r['full_wall']:.2f} s ({_ratio(both, r['full_wall']):.2f} x; "
        "includes a second process start and model load)",
        f"- per process, outside the call (start, imports, model load): {r['full_wall'] - r['full_call_s']:.1f} s "
        f"(uninterrupted), {r['resume_wall'] - r['resume_call_s']:.1f} s (resumed); a process's first call also "
        "pays one-time costs inside the call (compare the parent's warm-up calls)",
        f"- entries after the resume: {r['entries_after_resume']} (uninterrupted: {r['full_entries']})",
        f"- resumed scores vs uninterrupted: max abs diff {r['diff']['max_abs']:.3g}, max rel diff "
        f"{r['diff']['max_rel']:.3g} ({'within' if r['diff']['ok'] else '**beyond**'} {SCORE_RTOL:g}); "
        f"signatures {'identical' if r['same_signature'] else '**differ**'}",
    ]


#: What call 2 has to run even with call 1 stored: the work that depends on the summary.
CALL_2_RUNS = {
    "shannon": "Shannon's base pass (each document sentence after `<start>`) and full pass (after the "
               "document) depend on the document alone and are read; each summary's help pass "
               "(`<start> + summary`, then each sentence) is new work",
    "fflm": "of FFLM's five lists only lm_doc, p(document), depends on the document alone and is read; "
            "s2s p(summary | document), prefix p(summary | summary + document) and s2s_doc p(document | "
            "summary) each run a sequence as long as the document with the new summary in it, and lm "
            "p(summary) is new too",
    "blanc_help": "BLANC-help's base input is the masked sentence behind a filler of one '.' per summary "
                  "token, so it depends on the summary's token length: a base pass is read only for a "
                  "summary exactly as long (in tokens) as one scored before on that document; every help "
                  "pass has the new summary in it",
    "infolm": "the references' bags of distributions are read; each new prediction's bag is run",
}


def _notes(results: list[dict[str, Any]], resume: dict[str, Any] | None) -> list[str]:
    """One line per target missed or number that disagrees, with what was measured about why."""
    notes = []
    for r in results:
        t_ratio = _ratio(r["seconds"]["store_2"], r["seconds"]["cold_2"])
        c_ratio = _ratio(r["cpu_seconds"]["store_2"], r["cpu_seconds"]["cold_2"])
        k_ratio = _ratio(r["work"]["store_2"]["real"], r["work"]["cold_2"]["real"])
        target = SECOND_CALL_TARGETS[r["metric"]]
        if t_ratio > target or k_ratio > target:
            store = r["work"]["store_2"]
            notes.append(
                f"- {r['metric']}, call 2: {t_ratio:.0%} of cold in wall time, {c_ratio:.0%} in CPU time, "
                f"{k_ratio:.0%} in real tokens (target ≤ {target:.0%}). The store answered {store['hits']} of "
                f"{store['hits'] + store['misses']} lookups; {CALL_2_RUNS[r['metric']]}.")
        again = _ratio(r["seconds"]["store_2_again"], r["seconds"]["cold_2"])
        if again > REPEAT_TARGET or r["work"]["store_2_again"]["forwards"]:
            notes.append(f"- {r['metric']}: the repeated call is {again:.1%} of cold with "
                         f"{r['work']['store_2_again']['forwards']} forward passes.")
        lookup = _ratio(r["seconds"]["store_1"], r["seconds"]["cold_1"])
        if lookup > LOOKUP_TARGET:
            cpu = _ratio(r["cpu_seconds"]["store_1"], r["cpu_seconds"]["cold_1"])
            notes.append(f"- {r['metric']}: call 1 into an empty store is {lookup:.3f} x the call without in "
                         f"wall time, {cpu:.3f} x in CPU time, for the same forward work (rounds: no store "
                         f"{r['seconds_rounds']['cold_1']} s, store {r['seconds_rounds']['store_1']} s).")
        for key, what in (("diff_call2", "call 2"), ("diff_again", "call 2 again"), ("diff_call1", "call 1")):
            if not r[key]["ok"]:
                notes.append(f"- {r['metric']}: {what} with the store differs from without: max abs "
                             f"{r[key]['max_abs']:.3g}, max rel {r[key]['max_rel']:.3g} (beyond {SCORE_RTOL:g}); "
                             "set it beside 'Float32 batch invariance, without a store'.")
        if not r["same_signature"]:
            notes.append(f"- {r['metric']}: signatures differ with and without the store.")
        if not r["same_work_every_round"]:
            notes.append(f"- {r['metric']}: the forward work differed between rounds.")
    if resume is not None and not (resume["diff"]["ok"] and resume["same_signature"]):
        notes.append("- kill and resume: the resumed scores or signature differ from the uninterrupted run's.")
    return notes or ["- every target met; every number agrees."]


# ------------------------------------------------------------------------------------------------
# the run


def run(n_docs: int = 5, systems: tuple[str, str] = DEFAULT_SYSTEMS, repeats: int = 3, dtype: str = "float32",
        data: str | os.PathLike = DEFAULT_DATA, metrics: tuple[str, ...] = METRICS, bert_size: str = "small",
        resume_docs: int = 10, command: str = "") -> tuple[str, dict[str, Any]]:
    """Every section; returns the markdown and the raw numbers."""
    os.environ.pop("NLGMETRICS_CACHE_DIR", None)  # cache_dir=None must mean no store
    data = str(data)
    chosen = shortest_slice(data, n_docs, *systems)
    results = []
    with tempfile.TemporaryDirectory(prefix="speed-store-") as scratch:
        for name in metrics:
            setup = metric_setup(name, dtype, bert_size)
            results.append(measure_metric(setup, chosen, repeats, dtype, Path(scratch)))
        # where the store's numbers differ, how far batching alone moves them without a store
        variance = [batch_variance(metric_setup(r["metric"], dtype, bert_size), chosen, dtype) for r in results
                    if not (r["diff_call2"]["ok"] and r["diff_again"]["ok"])]
        resume = None
        if resume_docs > 0:
            resume = kill_and_resume(resume_docs, systems[0], data, dtype, Path(scratch))
            print(json.dumps({"kill_and_resume": {k: v for k, v in resume.items()}}), flush=True)
    markdown = render(results, resume, chosen, systems, command, bert_size, dtype, variance)
    return markdown, {"metrics": results, "kill_and_resume": resume, "batch_variance": variance}


def append_batch_variance(args: argparse.Namespace, command: str) -> None:
    """``--batch-variance``: the check alone (on call 2's slice), printed and appended to ``--out``."""
    os.environ.pop("NLGMETRICS_CACHE_DIR", None)
    chosen = shortest_slice(args.data, args.docs, *args.systems)
    rows = [batch_variance(metric_setup(m, args.dtype, args.bert_size), chosen, args.dtype)
            for m in args.metrics.split(",") if m]
    text = "\n".join(render_batch_variance(rows, command=command)) + "\n"
    print(text)
    if args.out is not None:
        with Path(args.out).open("a") as handle:
            handle.write(text)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--docs", type=int, default=5, help="the N shortest REALSumm documents (sections 1-4)")
    parser.add_argument("--systems", nargs=2, default=list(DEFAULT_SYSTEMS), metavar=("A", "B"),
                        help="system names (name/abs or name/ext where REALSumm has both)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the median is reported")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--metrics", default=",".join(METRICS), help=f"comma-separated, of {METRICS}")
    parser.add_argument("--bert-size", default="small", choices=["tiny", "small", "base"], help="BLANC's random BERT")
    parser.add_argument("--resume-docs", type=int, default=10, help="documents of the kill-and-resume child (0: skip)")
    parser.add_argument("--batch-variance", action="store_true",
                        help="only the float32 batch-invariance check of --metrics; appended to --out")
    parser.add_argument("--child", default=None, metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child is not None:
        child(args.child, args.resume_docs, args.systems[0], args.data, args.dtype)
        return
    command = harness.command_line("benchmarks.studies.store", argv)
    if args.batch_variance:
        append_batch_variance(args, command)
        return
    markdown, _ = run(args.docs, tuple(args.systems), args.repeats, args.dtype, args.data,
                        tuple(m for m in args.metrics.split(",") if m), args.bert_size, args.resume_docs, command)
    print(markdown)
    if args.out is not None:
        harness.write_report(args.out, markdown)


if __name__ == "__main__":
    main()
