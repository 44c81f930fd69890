"""The numbers the documents' prose cites, each read from results/ when
the documents are written (documents.py). A template names one as
`{{KIND:ARG:...}}`:

- `{{bench:RUN:ROW:median:VARIANT}}`, `ratio`, `ratio:VARIANT:OVER`,
  `per_page:VARIANT`, `n:VARIANT`, `share|rest|idle:VARIANT` (a user's wait: the
  share of memmap init and handover, the time outside it, the idle time
  left out): a row of the cited run RUN (bench.CITED_RUNS);
- `{{native:GROUP:NAME:THREADS:FIELD}}` (FIELD: ms, gbps, pct) and
  `{{native-ratio:GROUP:NAME:THREADS:GROUP:NAME:THREADS}}`: the documented CPU's
  native record (native.DOCUMENTED);
  `{{native-host:CPU:GROUP:FASTER:SLOWER}}`: how many times as fast FASTER ran as
  SLOWER on one thread in CPU's record (results/native-hosts/CPU.json);
- `{{test:PLAN:STEP:passed|failed|skipped}}`, `{{test:PLAN:sum:STEP-PREFIX:passed}}`:
  results/test/PLAN.json; `{{ci:KIND:minutes}}`, `{{ci:KIND:step:STEP:minutes}}`:
  results/ci/KIND.json;
- `{{breaks:GROUP:caught}}`, `{{breaks:GROUP:count}}`: results/breaks.json;
- `{{reference:ROW:base|patched|ratio|what}}`: a bench row's posting
  (catalog.py, lab/data/postings.json); `{{native-meta:host_cpu|device_gb}}`: facts of the native
  run; `{{bench-meta:DIR:guest_vcpus|rounds|host_cpu}}`: of a bench run;
- `{{matrix:clean|count}}`: results/matrix.json's targets;
- `{{series:patches}}`: the patches of patches/series; `{{lab:repeatable}}`:
  how closely two icount rounds must agree, `{{lab:default-minutes}}`: the
  budget of a cold default `memlab test`;
- `{{uploads:pinned|newest|date|summary|suites}}`: the last check of
  Debian's uploads (results/uploads.json); `{{base:name|version|upstream|
  package|release|suites}}`: the kernel base (kernel_base.py), `{{base:mainline}}`:
  the name of the mainline base.
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Callable

from . import native, paths
from .archive import RELEASES
from .bench import cited_dir
from .catalog import bench_rows
from .kernel_base import MAINLINE, current
from .kernel_tree import product_series
from .matrix import load_results
from .postings import Reference
from .results import REPEATABLE, Result
from .runner import LabError
from .runrecord import CI_RESULTS, RunRecord, test_record
from .testcmd import DEFAULT_PLAN_MINUTES
from .uploads import Uploads

BREAKS = paths.RESULTS / "breaks.json"


def percent(share: float) -> str:
    """A share (0..1) as the documents print it."""
    return f"{100 * share:.0f}%"


def duration(us: float, scale: float | None = None) -> str:
    """A time in the unit people read it in, chosen by `scale` (the row's
    largest time, so that a row keeps one unit) or by the time itself."""
    scale = us if scale is None else scale
    if scale >= 1e6:
        return f"{us / 1e6:.3f} s"
    if scale >= 1e4:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} us"


def _bench(d: str, row_name: str, what: str, *args: str) -> str:
    result = Result.load(cited_dir(d) / "bench.json")
    if row_name not in result.rows:
        raise LabError(f"results/{d}: no row {row_name!r}")
    row = result.rows[row_name]
    if what == "median":
        m = row.median(args[0])
        if m is None:
            raise LabError(f"results/{d} {row_name}: no {args[0]} samples")
        scale = max(x for v in row.samples if (x := row.median(v)) is not None)
        return duration(m, scale)
    if what == "ratio":
        r = row.ratio(*args) if args else row.ratio()
        if r is None:
            raise LabError(f"results/{d} {row_name}: no ratio {args}")
        return f"{r:.3f}"
    if what == "per_page":
        p = row.per_page(args[0])
        if p is None:
            raise LabError(f"results/{d} {row_name}: no per-page figure for {args[0]}")
        return f"{p:.1f}"
    if what == "n":
        return str(len(row.samples.get(args[0], [])))
    if what == "share":
        sh = row.share(args[0])
        if sh is None:
            raise LabError(f"results/{d} {row_name}: no share of a wait for {args[0]}")
        return percent(sh)
    if what in ("rest", "idle"):
        t = row.rest(args[0]) if what == "rest" else row.idle(args[0])
        if t is None:
            raise LabError(f"results/{d} {row_name}: no {what} of a wait for {args[0]}")
        return duration(t)
    raise LabError(f"bench figure: unknown field {what!r}")


def _native_rows() -> dict[tuple[str, str, int], dict]:
    _, rows = native.load(native.DOCUMENTED)
    return {(r["group"], r["name"], r["threads"]): r for r in rows}


def _native_row(group: str, name: str, threads: str) -> dict:
    rows = _native_rows()
    key = (group, name, int(threads))
    if key not in rows:
        raise LabError(f"{native.DOCUMENTED.name}: no row {key}")
    return rows[key]


def _native_meta(field: str) -> str:
    """A fact of the native run: host_cpu, or its meta's device_gb."""
    data, _ = native.load(native.DOCUMENTED)
    if field == "host_cpu":
        return str(data["host_cpu"])
    return f"{data['meta'][field]:g}"


def _bench_meta(d: str, field: str) -> str:
    """A fact of a bench run: guest_vcpus, rounds, host_cpu."""
    result = Result.load(cited_dir(d) / "bench.json")
    if field not in ("guest_vcpus", "rounds", "host_cpu"):
        raise LabError(f"bench-meta figure: unknown field {field!r}")
    return str(getattr(result, field))


def _reference(row_name: str, what: str) -> str:
    row = bench_rows().get(row_name)
    if row is None or not isinstance(row.reference, Reference):
        raise LabError(f"reference figure: no posting for row {row_name!r}")
    ref = row.reference
    if what == "ratio":
        return f"{ref.ratio:.3f}"
    if what in ("base", "patched"):
        return f"{getattr(ref, what):g} {ref.unit}"
    if what == "what":
        return ref.what
    raise LabError(f"reference figure: unknown field {what!r}")


def _lab(what: str) -> str:
    """The lab's own thresholds, where the prose cites them."""
    if what == "repeatable":
        return f"{100 * REPEATABLE:g}%"
    if what == "default-minutes":
        return str(DEFAULT_PLAN_MINUTES)
    raise LabError(f"lab figure: unknown field {what!r}")


def _native(group: str, name: str, threads: str, what: str) -> str:
    r = _native_row(group, name, threads)
    if what == "ms":
        return f"{1000 * r['median_s']:.1f}"
    if what == "gbps":
        return f"{r['gbps']:.1f}"
    if what == "pct":
        return f"{r['pct_of_limit']:.0f}"
    raise LabError(f"native figure: unknown field {what!r}")


def _native_host(slug: str, group: str, faster: str, slower: str) -> str:
    """How many times as fast @faster ran as @slower on one CPU's record."""
    source = native.host_record(slug)
    _, rows = native.load(source)
    ratio = native.speedup(rows, group, faster, slower)
    if ratio is None:
        raise LabError(f"native record of CPU {slug!r}: no {faster} and {slower} "
                       f"in group {group!r}")
    return f"{ratio:.2f}"


def _native_ratio(g1: str, n1: str, t1: str, g2: str, n2: str, t2: str) -> str:
    """How many times faster the second row is than the first."""
    a, b = _native_row(g1, n1, t1), _native_row(g2, n2, t2)
    return f"{a['median_s'] / b['median_s']:.2f}"


def _record(path: Path) -> RunRecord:
    if not path.exists():
        raise LabError(f"{path.relative_to(paths.REPO)}: no such run record yet "
                       "(a whole `memlab test` or `memlab ci` run writes it)")
    return RunRecord.load(path)


def _step_value(rec: RunRecord, source: Path, step: str, what: str) -> str:
    s = rec.step(step)
    if s is None:
        raise LabError(f"{source.relative_to(paths.REPO)}: no step {step!r}")
    if what == "minutes":
        return f"{s.seconds / 60:.1f}"
    if what in ("passed", "failed", "skipped"):
        return str(getattr(s, what))
    raise LabError(f"step figure: unknown field {what!r}")


def _test(plan: str, step: str, what: str, *rest: str) -> str:
    if plan not in ("default", "full"):
        raise LabError(f"test figure: unknown plan {plan!r} (default or full)")
    source = test_record(full=plan == "full")
    rec = _record(source)
    if step == "sum":   # a field summed over the steps whose names start so
        prefix, field = what, rest[0]
        return str(sum(getattr(s, field) for s in rec.steps if s.name.startswith(prefix)))
    return _step_value(rec, source, step, what)


def _ci(kind: str, what: str, *rest: str) -> str:
    source = CI_RESULTS / f"{kind}.json"
    rec = _record(source)
    if what == "minutes":
        return f"{rec.seconds / 60:.1f}"
    if what == "step":
        return _step_value(rec, source, rest[0], rest[1])
    raise LabError(f"ci figure: unknown field {what!r}")


def load_breaks(source: Path | None = None) -> dict[str, list[dict]]:
    """The groups of results/breaks.json (or another base's @source): lists
    of entries, each naming its break and what caught it (an empty list:
    nothing did)."""
    source = source or BREAKS
    name = source.relative_to(paths.REPO) if source.is_relative_to(paths.REPO) else source
    try:
        data = json.loads(source.read_text())
    except (OSError, ValueError) as e:
        raise LabError(f"{name}: {e}") from None
    groups = {k: v for k, v in data.items() if isinstance(v, list)} \
        if isinstance(data, dict) else {}
    for group, entries in groups.items():
        for entry in entries:
            if not (isinstance(entry, dict) and isinstance(entry.get("break"), str)
                    and isinstance(entry.get("caught_by"), list)):
                raise LabError(f"{name}: an entry of {group!r} lacks its "
                               f"'break' text or its 'caught_by' list: {entry!r}")
    return groups


def breaks_tally(group: str) -> tuple[int, int]:
    """(caught, count) of a group of results/breaks.json."""
    entries = load_breaks().get(group)
    if entries is None:
        raise LabError(f"results/breaks.json: no group {group!r}")
    return sum(1 for e in entries if e["caught_by"]), len(entries)


def matrix_tally(source: Path | None = None) -> tuple[int, int]:
    """(clean, count) targets of the last compile matrix over all targets
    (of the base in use, or @source: another base's)."""
    targets = load_results(source)["targets"]
    return sum(1 for t in targets if t["ok"]), len(targets)


def _tally_field(tally: tuple[int, int], what: str, fields: tuple[str, str]) -> str:
    if what not in fields:
        raise LabError(f"unknown field {what!r} (known: {', '.join(fields)})")
    return str(tally[fields.index(what)])


def _breaks(group: str, what: str) -> str:
    return _tally_field(breaks_tally(group), what, ("caught", "count"))


def _matrix(what: str) -> str:
    return _tally_field(matrix_tally(), what, ("clean", "count"))


def _series(what: str) -> str:
    if what == "patches":
        return str(len(product_series().patches()))
    raise LabError(f"series figure: unknown field {what!r}")


def _uploads(what: str) -> str:
    """A fact of the last check of Debian's uploads (results/uploads.json)."""
    rec = Uploads.load()
    facts = {"pinned": rec.pinned, "newest": rec.newest, "date": rec.date,
             "summary": rec.summary(), "suites": ", ".join(rec.suites)}
    if what not in facts:
        raise LabError(f"uploads figure: unknown field {what!r} (known: {', '.join(facts)})")
    return facts[what]


def _base(what: str) -> str:
    """A fact of the kernel base the series is written for (kernel_base.py)."""
    base = current()
    facts = {"name": base.name, "version": base.version,
             "upstream": base.version.rsplit("-", 1)[0], "package": base.package,
             "release": RELEASES.get(base.release, base.release),
             "suites": ", ".join(base.suites), "mainline": MAINLINE}
    if what not in facts:
        raise LabError(f"base figure: unknown field {what!r} (known: {', '.join(facts)})")
    return facts[what]


KINDS: dict[str, Callable[..., str]] = {
    "bench": _bench, "native": _native, "native-ratio": _native_ratio,
    "native-host": _native_host,
    "native-meta": _native_meta, "bench-meta": _bench_meta, "reference": _reference, "test": _test, "ci": _ci,
    "breaks": _breaks, "matrix": _matrix, "series": _series, "lab": _lab,
    "uploads": _uploads, "base": _base,
}


def value(name: str) -> str:
    """The figure a template names, e.g. `bench:icount:fsdax-rebind:ratio`."""
    kind, *args = name.split(":")
    fn = KINDS.get(kind)
    if fn is None:
        raise LabError(f"unknown figure {name!r} (kinds: {', '.join(KINDS)})")
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        raise LabError(f"figure {name!r}: wrong arguments for {kind!r}") from None
    try:
        return fn(*args)
    except LabError as e:
        raise LabError(f"figure {name!r}: {e}") from None
    except (ValueError, KeyError, IndexError, AttributeError, TypeError,
            ZeroDivisionError, OSError) as e:
        # A result file without the field, or an argument of the wrong form.
        raise LabError(f"figure {name!r}: cannot be read from results/ "
                       f"({type(e).__name__}: {e})") from None
