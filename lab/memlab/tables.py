"""The documents' tables, each built from a file in results/: a caption
that says where its numbers come from, a header and rows (documents.py
writes them as markdown or as plain text for mail)."""
from __future__ import annotations

import argparse
import ast
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import (arches, bench, commands, figures, kernel_base, matrix, native, package,
               paths, postings, provenance, selftests, switches)
from .catalog import SCENARIOS, bench_rows
from .figures import duration, percent
from .floors import FLOORS
from .postings import Reference
from .results import BASE, ONE_THREAD, ONE_THREAD_ARG, PATCHED, Result, Row
from .runner import LabError
from .runrecord import CI_RESULTS, RunRecord, StepRecord, test_record, totals
from .series import Series


def reference(name: str) -> Reference | str:
    row = bench_rows().get(name)
    return row.reference if row else ""


@dataclass
class Table:
    """A table in no particular format: a caption (where its numbers come
    from), a header, and rows; the first column is text, the rest numbers
    but for the trailing text columns. The plain-text form, for mail, names
    each row by its key and leaves the trailing text columns out."""
    caption: str
    header: list[str]
    rows: list[list[str]]
    keys: list[str]
    trailing_text: int = 0

    def markdown(self) -> list[str]:
        def line(cells: list[str]) -> str:
            return "| " + " | ".join(cells) + " |"
        numbers = len(self.header) - 1 - self.trailing_text
        align = ["---"] + ["---:"] * numbers + ["---"] * self.trailing_text
        return [f"*{self.caption}*", "", line(self.header), line(align),
                *map(line, self.rows)]

    def text(self, name: str) -> list[str]:
        end = len(self.header) - self.trailing_text
        table = [["", *self.header[1:end]]] + [[k, *r[1:end]]
                                              for k, r in zip(self.keys, self.rows)]
        widths = [max(len(r[i]) for r in table) for i in range(end)]

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0])
            rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
            return "  " + "   ".join([first, *rest]).rstrip()
        caption = textwrap.wrap(f"memlab report {name}: {self.caption}", 70,
                                break_on_hyphens=False, break_long_words=False)
        return [f"  {c}" for c in caption] + [line(r) for r in table]


def _ratio(x: float | None) -> str:
    return f"{x:.3f}" if x is not None else "n/a"


def _median(row: Row, variant: str) -> str:
    m = row.median(variant)
    scale = max(x for v in row.samples if (x := row.median(v)) is not None) if m else None
    return duration(m, scale) if m is not None else "n/a"


def _bench_caption(source: Path, result: Result, base: str = "") -> str:
    rounds = f"{result.rounds} alternating boots per kernel"
    if result.repeatability:
        worst = max(r.spread for r in result.repeatability.values())
        rounds += ", whose medians agree " + (f"within {100 * worst:.2g}%" if worst
                                               else "to the last digit")
    rows = [] if source.parent.name in (result.mode, f"{result.mode}-quick") \
        else list(result.rows)
    return (f"{source.relative_to(paths.REPO)}: {result.date}, {result.host_cpu}, "
            f"{result.label}, {rounds}; {provenance.state(result.provenance)}; "
            f"`{bench.command(result.mode, result.quick, rows, base)}`")


def _row_label(row: Row, variant: str = PATCHED) -> str:
    n = len(row.samples.get(variant, []))
    return f"{row.metric}, median of {n}"


def _labels(names: list[str]) -> list[str]:
    """The rows' short names (catalog.py), for narrow tables."""
    rows = bench_rows()
    return [rows[n].label or n if n in rows else n for n in names]


def bench_table(source: Path, names: list[str] | None = None, per_page: bool = False,
                references: bool = False) -> Table:
    """base, patched and patched/base of a bench run's rows; optionally
    instructions per page (icount) and the postings' numbers."""
    result = Result.load(source)
    header = ["scenario", "base", "patched", "patched/base"]
    header += ["instructions per page"] if per_page else []
    header += ["posting (quoted)"] if references else []
    names = names or list(result.rows)
    rows = []
    for name in names:
        if name not in result.rows:
            raise LabError(f"{source}: no row {name!r} (has {', '.join(result.rows)})")
        row = result.rows[name]
        cells = [_row_label(row), _median(row, BASE), _median(row, PATCHED),
                 _ratio(row.ratio())]
        if per_page:
            b, p = row.per_page(BASE), row.per_page(PATCHED)
            cells.append(f"{b:.1f} -> {p:.1f}" if b is not None and p is not None else "")
        if references:
            cells.append(str(reference(name)))
        rows.append(cells)
    return Table(_bench_caption(source, result), header, rows, _labels(names),
                 trailing_text=int(references))


def waits_table(source: Path) -> Table:
    """A user's whole waits: base, patched and patched/base of each busy
    time; on each kernel the share of memmap init and handover, the rest of
    the wait (where the next bottleneck lies) and the idle time left out."""
    result = Result.load(source)
    kernels = (BASE, PATCHED)
    header = ["the user waits for", "base", "patched", "patched/base",
              "memmap init + handover, base", "on patched", "the rest, base", "on patched",
              "idle left out, base", "on patched"]

    def times(figure: Callable[[str], float | None]) -> list[str]:
        values = {v: x for v in kernels if (x := figure(v)) is not None}
        scale = max(values.values(), default=0.0)
        return [duration(values[v], scale) if v in values else "n/a" for v in kernels]

    rows = []
    for row in result.rows.values():
        rows.append([_row_label(row), _median(row, BASE), _median(row, PATCHED),
                     _ratio(row.ratio()),
                     *(percent(sh) if (sh := row.share(v)) is not None else "n/a"
                       for v in kernels),
                     *times(row.rest), *times(row.idle)])
    return Table(_bench_caption(source, result), header, rows, _labels(list(result.rows)))


def bases_bench_table(other: str, default: str) -> Table:
    """The rows of cited run @other, on another kernel base, beside the
    same rows of cited run @default (the default base) and the postings:
    each base's patched/base, and how far apart they are."""
    run = bench.CITED_RUNS[other]
    sources = (bench.cited_dir(other) / "bench.json", bench.cited_dir(default) / "bench.json")
    mine, theirs = (Result.load(src) for src in sources)
    names = list(mine.rows)
    header = ["scenario", f"{kernel_base.DEFAULT} patched/base", f"{run.base} base",
              f"{run.base} patched", f"{run.base} patched/base",
              f"{run.base} against {kernel_base.DEFAULT}", "posting (quoted)"]
    rows = []
    for name in names:
        row, old = mine.rows[name], theirs.rows.get(name)
        ratio, old_ratio = row.ratio(), old.ratio() if old else None
        apart = (f"{100 * (ratio / old_ratio - 1):+.1f}%"
                 if ratio is not None and old_ratio else "n/a")
        rows.append([_row_label(row), _ratio(old_ratio), _median(row, BASE),
                     _median(row, PATCHED), _ratio(ratio), apart, str(reference(name))])
    caption = (f"{_bench_caption(sources[0], mine, run.base)}. "
               f"Beside it, {_bench_caption(sources[1], theirs)}")
    return Table(caption, header, rows, _labels(names), trailing_text=1)


def parallel_table(source: Path) -> Table:
    """base, the patched kernel on one thread and on all vCPUs (wall, kvm)."""
    result = Result.load(source)
    vcpus = result.guest_vcpus
    header = ["scenario", "base", "1 thread", f"{vcpus} vCPUs", f"{vcpus} vCPUs/1 thread",
              "patched/base"]
    names = [n for n, row in result.rows.items() if row.samples.get(ONE_THREAD)]
    rows = [[_row_label(row), _median(row, BASE), _median(row, ONE_THREAD),
             _median(row, PATCHED), _ratio(row.ratio(PATCHED, ONE_THREAD)),
             _ratio(row.ratio())] for row in map(result.rows.__getitem__, names)]
    caption = (_bench_caption(source, result) + "; patched kernel with each range on "
               f"1 thread ({ONE_THREAD_ARG}) and on all {vcpus} vCPUs")
    return Table(caption, header, rows, _labels(names))


def _native_caption(source: Path, data: dict, rows: list[dict]) -> str:
    runs = len(rows[0]["seconds"]) if rows else 0
    return (f"{source.relative_to(paths.REPO)}: {data['date']}, {data['host_cpu']}, "
            f"real hardware, medians of {runs} runs; "
            f"{provenance.state(data.get('provenance'))}; `memlab bench native`")


# What each native loop is, in the tables' words.
BASE_INIT = f"{kernel_base.current().name}'s per-field init"
NATIVE_LOOPS = {
    ("memmap", "slow"): BASE_INIT,
    ("memmap", "copy"): "template copy, plain stores",
    ("memmap", "copy_nt"): "per-page MOVNTI copy",
    ("memmap", "template_nt"): "MOVNTI runs from registers (the series)",
    ("limit", "movnti_fill"): "yardstick: MOVNTI fill",
    ("limit", "vector_nt_fill"): "yardstick: widest streaming fill",
}
NATIVE_ONLINE = {group: f"in {size >> 30} GB blocks" if size >= 1 << 30 else
                 f"in {size >> 20} MB blocks" for group, size in native.ONLINE_BLOCKS.items()}
NATIVE_CLEARS = {"per_4k": "clear_page() per 4 KiB page",
                 "run_2m": "clear_pages() in 2 MiB runs",
                 "run_1g": "clear_pages() as one 1 GiB run"}


def native_memmap_table(source: Path) -> Table:
    data, rows = native.load(source)
    by = {(r["group"], r["name"], r["threads"]): r for r in rows}
    threads = sorted({r["threads"] for r in rows})
    header = [f"loop ({data['meta']['device_gb']:g} GB device's memmap)"]
    for t in threads:
        header += [f"{t} thread{'s' if t > 1 else ''}", "% of fastest fill"]
    out = []
    for (group, name), label in NATIVE_LOOPS.items():
        cells = [label]
        for t in threads:
            r = by.get((group, name, t))
            cells += [f"{1000 * r['median_s']:.1f} ms", f"{r['pct_of_limit']:.0f}%"] if r \
                else ["n/a", ""]
        out.append(cells)
    return Table(_native_caption(source, data, rows), header, out, [r[0] for r in out])


def native_online_table(source: Path) -> Table:
    data, rows = native.load(source)
    by = {(r["group"], r["name"]): r for r in rows if r["threads"] == 1}
    header = [f"onlining {data['meta']['device_gb']:g} GB", BASE_INIT.replace(" per-field", ""),
              "plain template", "streamed template", "one pass, plain", "one pass, streamed"]
    names = ("slow", "plain", "stream", "one_pass_plain", "one_pass_stream")
    out = [[label] + [f"{1000 * by[(group, k)]['median_s']:.1f} ms" if (group, k) in by
                      else "n/a" for k in names]
           for group, label in NATIVE_ONLINE.items()]
    return Table(_native_caption(source, data, rows), header, out, [r[0] for r in out])


def postings_table() -> Table:
    """The postings the documents quote: where each figure comes from."""
    figures_of: dict[str, list[str]] = {}
    for row in bench_rows().values():
        if isinstance(row.reference, Reference):
            figures_of.setdefault(row.reference.posting.key, []).append(
                f"{row.reference.what} ({row.reference.where})")
    rows = [[p.subject, p.list, p.date, p.base, "; ".join(figures_of.get(key, []))]
            for key, p in postings.postings().items()]
    return Table("lab/data/postings.json: quoted, not reproduced by the lab",
                 ["posting", "list", "date", "measured on", "figures quoted"], rows,
                 list(postings.postings()), trailing_text=4)


def references_table() -> Table:
    refs = {n: r.reference for n, r in bench_rows().items() if isinstance(r.reference, Reference)}
    rows = [[ref.what, ref.where, f"{ref.base:g} {ref.unit}", f"{ref.patched:g} {ref.unit}",
             f"{ref.ratio:.3f}"] for ref in refs.values()]
    return Table("lab/data/postings.json: the postings' own figures, quoted (not measured "
                 "by the lab)", ["posting", "measured on", "base", "patched", "patched/base"],
                 rows, [r[0] for r in rows])


def native_clear_table(source: Path) -> Table:
    """Clearing a run of pages: page by page, in 2 MiB runs, as one run."""
    data, rows = native.load(source)
    by = {(r["group"], r["name"], r["threads"]): r for r in rows}
    threads = sorted({r["threads"] for r in rows})
    header = ["clearing 1 GiB"] + [f"{t} thread{'s' if t > 1 else ''}" for t in threads]
    out = [[label] + [f"{1000 * by[('clear', name, t)]['median_s']:.1f} ms"
                      if ("clear", name, t) in by else "n/a" for t in threads]
           for name, label in NATIVE_CLEARS.items()]
    return Table(_native_caption(source, data, rows), header, out, [r[0] for r in out])


def native_clear_runs_table(source: Path, touch: str) -> Table:
    """Clearing large runs with each variant (GB/s), the groups whose name
    ends with @touch ("" for the runs alone)."""
    data, rows = native.load(source)
    groups = [g for g in dict.fromkeys(r["group"] for r in rows)
              if native.is_clear_run_group(g)
              and (g.endswith(f"+ {touch}") if touch else "+" not in g)]
    if not groups:
        raise LabError(f"{source}: no clearing groups ending with {touch!r} "
                       "(`memlab bench native` records them)")
    names, out = native.clearing_table(rows, groups)
    header = ["run", *(f"{native.CLEAR_VARIANTS[n]} GB/s" for n in names),
              "best streaming vs REP STOSB"]
    caption = (_native_caption(source, data, rows) + "; one thread, each run cold; "
               f"vector streaming stores: {data['meta'].get('vector', '?')}")
    return Table(caption, header, out, [r[0] for r in out])


# The figures each CPU's record gives the kernel's rules: a variant's
# speed against another's on one group (one thread), as (label, group,
# faster, slower): clearing by run size, onlining by block size.
NATIVE_HOST_RATIOS = (
    ("CLZERO vs REP STOSB, 32 MB runs", "clear 32M", "clzero", "stosb"),
    ("CLZERO vs REP STOSB, one 1 GB run", "clear 1G", "clzero", "stosb"),
    ("CLZERO vs REP STOSB, 16 GB in 1 GB runs", f"clear {native.SEQUENCE_GB}G in 1G runs",
     "clzero", "stosb"),
    ("MOVNTI vs REP STOSB, 32 MB runs", "clear 32M", "movnti", "stosb"),
    ("MOVNTI vs REP STOSB, 32 MB runs read back", "clear 32M + read run", "movnti", "stosb"),
    ("MOVNTI vs REP STOSB, one 1 GB run", "clear 1G", "movnti", "stosb"),
    ("streamed vs plain template, 128 MB blocks", "online 128M", "stream", "plain"),
    ("streamed vs plain template, 2 GB blocks", "online 2G", "stream", "plain"),
)


def native_hosts_table() -> Table:
    """One row per CPU measured (results/native-hosts/), the ratios the
    clearing and onlining rules rest on."""
    sources = sorted(native.HOSTS.glob("*.json"))
    if not sources:
        raise LabError(f"{native.HOSTS.relative_to(paths.REPO)}: no record "
                       "(`memlab bench native` writes one per CPU)")
    out = []
    for source in sources:
        data, rows = native.load(source)
        cells = [data["host_cpu"], data["date"].split()[0]]
        for _, group, faster, slower in NATIVE_HOST_RATIOS:
            ratio = native.speedup(rows, group, faster, slower)
            cells.append(f"{ratio:.2f}x" if ratio else "n/a")
        out.append(cells)
    caption = (f"{native.HOSTS.relative_to(paths.REPO)}/: one record per CPU, "
               "`memlab bench native`; speed of the first variant over the second, "
               "medians, one thread, each run cold")
    return Table(caption, ["CPU", "measured", *(r[0] for r in NATIVE_HOST_RATIOS)], out,
                 [r[0] for r in out])


def native_online_policy_table() -> Table:
    """Each CPU measured: for a hot-added block left free, plain against
    streamed stores without the checks of its tails on their first free,
    and with them where the record has them, and the kernel's choice
    against the faster."""
    out = []
    for source in sorted(native.HOSTS.glob("*.json")):
        data, rows = native.load(source)
        for p in native.online_policy(rows, data["meta"]["struct_page_size"]):
            spread = {k: "{:.1f}-{:.1f}".format(*(1000 * t for t in r))
                      for k, r in p["ranges"].items()}
            out.append([data["host_cpu"], NATIVE_ONLINE[p["group"]],
                        "checked" if p["checked"] else "not checked",
                        f"{1000 * p['plain']:.1f} ms ({spread['plain']})",
                        f"{1000 * p['stream']:.1f} ms ({spread['stream']})",
                        p["choice"], f"{100 * p['over_best']:+.1f}%"])
    if not out:
        raise LabError(f"{native.HOSTS.relative_to(paths.REPO)}: no record with the "
                       "one-pass onlining rows (`memlab bench native`)")
    caption = (f"{native.HOSTS.relative_to(paths.REPO)}/: one record per CPU, `memlab bench "
               "native`; onlining the memmap of its device in one pass, medians (min-max) "
               "of its runs, one thread; the checked rows where the record has the "
               "checking walk")
    return Table(caption, ["CPU", "blocks", "tails on their first free", "plain", "streamed",
                           "kernel's choice", "choice against the faster"], out,
                 [f"{r[0]} {r[1]} {r[2]}" for r in out])


def _minutes(rec: RunRecord | None, name: str) -> str:
    step = rec.step(name) if rec else None
    return f"{step.seconds / 60:.1f}" if step else ""


def ci_table() -> Table:
    """Each step of the last cold and the last warm CI run, in minutes."""
    records = {kind: RunRecord.load(path) for kind in ("cold", "warm")
               if (path := CI_RESULTS / f"{kind}.json").exists()}
    if not records:
        raise LabError("no CI run recorded in results/ci/ (`memlab ci` writes one)")
    names: list[str] = []
    for rec in records.values():
        names += [s.name for s in rec.steps if s.name not in names]
    kinds = list(records)
    # Each run's time and checks side by side: runs of different commits
    # need not have run the same checks.
    header = ["step", *(h for k in kinds for h in (f"{k} run (min)", f"{k}: checks passed"))]
    rows = []
    for name in names:
        cells = []
        for k in kinds:
            step = records[k].step(name)
            cells += [_minutes(records[k], name), str(step.passed) if step else ""]
        rows.append([name, *cells])
    rows.append(["all", *(c for k in kinds for c in (f"{records[k].seconds / 60:.1f}",
                                                     str(totals(records[k].steps)[0])))])
    caption = "; ".join(
        f"results/ci/{k}.json: {r.date}, {r.host_cpu}, commit {r.commit}, exit {r.exit_code}"
        + (" (empty compiler cache)" if r.cold else "") + f", {provenance.state(r.provenance)}"
        for k, r in records.items()) + "; `memlab ci` (`.ci/run`)"
    return Table(caption, header, rows, [r[0] for r in rows])


def _rerun_text(rec: RunRecord) -> str:
    """The steps of @rec that later partial runs re-ran, with their code."""
    verb = "re-run" if rec.whole else "run"
    return "".join(
        f"; {verb} {date}, commit {(steps[0].provenance or {}).get('commit', '?')}, "
        f"{provenance.state(steps[0].provenance)}: {', '.join(s.name for s in steps)}"
        for date, steps in rec.rerun_steps().items())


def _source(path: Path, date: str, commit: str, recorded: dict[str, Any] | None,
            how: str) -> str:
    """A record as a table's source: when, what code, whether that is
    today's, and the command (@how) that remakes it."""
    return (f"{path.relative_to(paths.REPO)}: {date}, commit {commit}, "
            f"{provenance.state(recorded)} ({how})")


def _run_source(path: Path, rec: RunRecord, how: str) -> str:
    """A test run record as a table's source: its run (or that no whole run
    made it) and the steps partial runs re-ran."""
    head = (_source(path, rec.date, rec.commit, rec.provenance, how) if rec.whole
            else f"{path.relative_to(paths.REPO)}: no whole run, only parts ({how})")
    return head + _rerun_text(rec)


def _steps_cell(rec: RunRecord | None, kind: str, cell: Callable[[StepRecord], str],
                recorded_by: str) -> str:
    """Every step of one kind ("kunit", "guest") of a run record: each
    kernel's result."""
    steps = [s for s in rec.steps if s.name.startswith(kind + " ")] if rec else []
    if not steps:
        return _not_there(rec, recorded_by)
    return "; ".join(f"{s.name.removeprefix(kind + ' ')}: {cell(s)}" for s in steps)


def _step_cell(rec: RunRecord | None, step: str, verdict: Callable[[StepRecord], str],
               recorded_by: str = "`memlab test --full`") -> str:
    """A step of a run record in the proof table's words."""
    s = rec.step(step) if rec else None
    if s is None:
        return _not_there(rec, recorded_by)
    return verdict(s)


def _not_there(rec: RunRecord | None, recorded_by: str) -> str:
    """A proof cell whose step has no result: no record, or not run in it."""
    return f"not recorded ({recorded_by})" if rec is None else "not run"


def _kunit_result(s: StepRecord) -> str:
    return f"{s.passed} pass, {s.failed} fail" + (f", {s.skipped} skip" if s.skipped else "")


def _guest_result(s: StepRecord) -> str:
    return f"{s.passed} of {s.passed + s.failed} runs pass"


def _kunit_cell(rec: RunRecord | None, step: str,
                recorded_by: str = "`memlab test --full`") -> str:
    return _step_cell(rec, step, _kunit_result, recorded_by)


def _guest_cell(rec: RunRecord | None, step: str) -> str:
    return _step_cell(rec, step, _guest_result)


def _build_cell(rec: RunRecord | None, step: str) -> str:
    return _step_cell(rec, step, lambda s: "failed" if s.failed else "ok")


def _prefixes_label(recorded: tuple[dict, list[matrix.PrefixResult]] | None) -> str:
    """The proof table's words for a prefixes record (matrix.load_prefixes()):
    whether its series has clearing patches to build alone."""
    tail = not recorded or matrix.built_tail(recorded[1])
    return ("every prefix, and the clearing patches alone" if tail else "every prefix") \
        + ": W=1, x86-64 and arm64"


def _prefixes_cell(recorded: tuple[dict, list[matrix.PrefixResult]] | None,
                   by: str) -> str:
    if recorded is None:
        return f"not recorded ({by})"
    prefixes = recorded[1]
    bad = [p.patch for p in prefixes if not p.ok]
    return f"{len(prefixes) - len(bad)} of {len(prefixes)} clean" + (
        f"; not clean: {', '.join(bad)}" if bad else "")


def _matrix_cell(source: Path, by: str) -> str:
    if not source.exists():
        return f"not recorded ({by})"
    clean, count = figures.matrix_tally(source)
    recorded = {t["target"] for t in matrix.load_results(source)["targets"]}
    unrun = [name for name in matrix.TARGETS if name not in recorded]
    return f"{clean} of {count} targets clean" + (
        f"; not run yet: {', '.join(unrun)}" if unrun else "")


def _matrix_source(path: Path, by: str) -> str:
    data = matrix.load_results(path)
    return _source(path, data["date"], data["commit"], data.get("provenance"), by)


def _record_or_none(path: Path) -> RunRecord | None:
    return RunRecord.load(path) if path.exists() else None


def proof_table() -> Table:
    """What the tests prove, from the last whole `memlab test` runs and the
    record of deliberately broken fast paths."""
    default = _record_or_none(test_record(full=False))
    full = _record_or_none(test_record(full=True))
    if default is None:
        raise LabError("no `memlab test` run recorded in results/test/")
    # The mainline base's own run, a step of the default base's (testcmd.run_base()).
    mainline_record = test_record(False, kernel_base.MAINLINE)
    mainline = _record_or_none(mainline_record)
    mainline_full_record = test_record(True, kernel_base.MAINLINE)
    mainline_full = _record_or_none(mainline_full_record)
    by_mainline_full = f"`MEMLAB_BASE={kernel_base.MAINLINE} memlab test --full`"
    mainline_matrix = paths.results_of(kernel_base.MAINLINE) / matrix.MATRIX_RESULTS.name
    by_matrix = "`memlab matrix`"
    by_mainline_matrix = f"`MEMLAB_BASE={kernel_base.MAINLINE} memlab matrix`"
    mainline_prefixes = paths.results_of(kernel_base.MAINLINE) / matrix.PREFIX_RESULTS.name
    by_mainline_prefixes = f"`MEMLAB_BASE={kernel_base.MAINLINE} memlab matrix --prefixes`"
    prefixes = {source: matrix.load_prefixes(source)
                for source in (matrix.PREFIX_RESULTS, mainline_prefixes)}
    by_prefixes = "`memlab matrix --prefixes`"
    prefixes_by = {matrix.PREFIX_RESULTS: f"{by_prefixes}, a step of `memlab test --full`",
                   mainline_prefixes: f"{by_mainline_prefixes}, a step of {by_mainline_full}"}
    by_mainline = "`memlab test`"

    def caught(group: str) -> str:
        return "{} of {} caught".format(*figures.breaks_tally(group))
    rows = [
        ["KUnit: every struct page byte-identical to the slow path's",
         "lab (x86-64, streaming stores)", _kunit_cell(full, "kunit lab")],
        ["", "defer (x86-64, deferred struct page init)", _kunit_cell(default, "kunit defer")],
        ["", "kunit (arm64: plain stores, deferred init, DEBUG_VM)",
         _kunit_cell(default, "kunit kunit arm64")],
        ["", "kunit (sparc64: page->virtual per pfn, section in page->flags)",
         _kunit_cell(default, "kunit kunit sparc64")],
        ["", "vm (DEBUG_VM, lockdep)", _kunit_cell(full, "kunit vm")],
        ["", "debug (KASAN)", _kunit_cell(full, "kunit debug")],
        ["", "debian (Debian's own config: NUMA, deferred init, init_on_alloc)",
         _kunit_cell(full, f"kunit {arches.DEBIAN_CONFIG}")],
        ["Guest scenarios (QEMU): data, page counts, console clean",
         "lab, patched and base", _guest_cell(full, "guest lab")],
        ["", "defer", _guest_cell(full, "guest defer")],
        ["", "vm", _guest_cell(full, "guest vm")],
        ["", "debug", _guest_cell(full, "guest debug")],
        ["", "debian, patched and base", _guest_cell(full, f"guest {arches.DEBIAN_CONFIG}")],
        ["The kernel's mm and memory-hotplug selftests, base against patched",
         "debian", selftests.recorded(arches.DEBIAN_CONFIG)],
        [f"The mainline series (patches/{kernel_base.MAINLINE}/)",
         "on its pristine tree: `git am`, checkpatch",
         _step_cell(mainline, "apply", lambda s: "fails" if s.failed else "applies",
                    by_mainline) + "; "
         + _step_cell(mainline, "checkpatch", lambda s: f"{s.passed} of "
                      f"{s.passed + s.failed} patches clean", by_mainline)],
        ["", "kunit.py (x86-64)", _kunit_cell(mainline, "kunit.py x86_64", by_mainline)],
        ["", "KUnit, each kernel of `--full`",
         _steps_cell(mainline_full, "kunit", _kunit_result, by_mainline_full)],
        ["", "guest scenarios, each kernel of `--full`",
         _steps_cell(mainline_full, "guest", _guest_result, by_mainline_full)],
        ["", "compile matrix: W=1 (gcc, clang) and sparse, series vs pristine",
         _matrix_cell(mainline_matrix, by_mainline_matrix)],
        ["", _prefixes_label(prefixes[mainline_prefixes]),
         _prefixes_cell(prefixes[mainline_prefixes], by_mainline_prefixes)],
        ["Deliberately broken fast paths", "KUnit", caught("kunit")],
        ["", "guest scenarios", caught("guests")],
        ["", "compile matrix: a sparse-only and a clang-only mistake", caught("matrix")],
        ["Builds", "i386 HIGHMEM (compile)", _build_cell(full, "build highmem i386")],
        ["", _prefixes_label(prefixes[matrix.PREFIX_RESULTS]),
         _prefixes_cell(prefixes[matrix.PREFIX_RESULTS], by_prefixes)],
        ["", "compile matrix: W=1 (gcc, clang) and sparse, series vs pristine",
         _matrix_cell(matrix.MATRIX_RESULTS, by_matrix)],
    ]
    sources = [_run_source(test_record(full=False), default, "`memlab test`")]
    if full:
        sources.append(_run_source(test_record(full=True), full, "`memlab test --full`"))
    if mainline:
        sources.append(_run_source(mainline_record, mainline,
                                   f"`memlab test`'s step {kernel_base.MAINLINE}"))
    if mainline_full:
        sources.append(_run_source(mainline_full_record, mainline_full, by_mainline_full))
    sources += [f"results/selftests/{arches.DEBIAN_CONFIG}.json (`memlab test --full`)",
                "results/breaks.json (each break run by hand, docs/testing.md)"]
    sources += [_matrix_source(path, by) for path, by in (
                    (matrix.MATRIX_RESULTS, by_matrix),
                    (mainline_matrix, by_mainline_matrix))
                if path.exists()]
    for source, recorded in prefixes.items():
        if recorded:
            facts = recorded[0]
            sources.append(_source(source, facts["date"], facts["commit"],
                                   facts.get("provenance"), prefixes_by[source]))
    return Table("; ".join(sources), ["proof", "kernel", "result"], rows,
                 [r[0] or "" for r in rows], trailing_text=2)


def selftests_table() -> Table:
    """The debian guest's selftests that did not pass on both kernels, and why."""
    rows = [[f"`{t['test']}`", str(t["base"]), str(t["patched"]),
             selftests.NOT_PASSING_WHY.get(str(t["test"]), "not explained")]
            for t in selftests.not_passing(arches.DEBIAN_CONFIG)]
    return Table(f"results/selftests/{arches.DEBIAN_CONFIG}.json: "
                 f"{selftests.recorded(arches.DEBIAN_CONFIG)}; `memlab test --full`",
                 ["selftest", "base", "patched", "why"], rows,
                 [r[0] for r in rows], trailing_text=3)


def breaks_table(group: str, source: Path | None = None,
                 broken: str = "broken fast path") -> Table:
    """The deliberate breaks of one group (of results/breaks.json, or another
    base's @source) and what caught them; @broken: what each one broke."""
    source = source or figures.BREAKS
    entries = figures.load_breaks(source).get(group, [])
    header = [broken, "caught by", "how", "not caught by"]
    def caught(e: dict) -> str:
        by = ", ".join(e["caught_by"]) or "nothing"
        n = e.get("failed_cases")
        return by + (f" ({n} case{'s' if n != 1 else ''} fail{'s' if n == 1 else ''})"
                     if n is not None else "")
    rows = [[e["break"], caught(e), e.get("how", ""), e.get("not_caught_by", "")]
            for e in entries]
    return Table(f"{source.relative_to(paths.REPO)}: local edits, rebuilt, run, reverted, "
                 "recorded by hand (docs/testing.md)", header, rows,
                 [r[0] for r in rows], trailing_text=3)


def matrix_table() -> Table:
    """The compile matrix's targets and the last run over all of them."""
    data = matrix.load_results()
    by = {t["target"]: t for t in data["targets"]}
    rows = []
    for name, t in matrix.TARGETS.items():
        res = by.get(name)
        verdict = "not run" if res is None else "ok" if res["ok"] else \
            (res["note"] or f"{len(res['new'])} new diagnostics")
        checks = "" if res is None else matrix.TargetResult(**res).checks
        rows.append([name, f"{t.make_arch} {t.defconfig}", t.covers, checks, verdict])
    amended = "".join(f"; {', '.join(a['targets'])} re-run {a['date']}, {a['host_cpu']}, "
                      f"lab commit {a['commit']}" for a in data.get("amended", []))
    caption = (f"results/matrix.json: {data['date']}, {data['host_cpu']}, lab commit "
               f"{data['commit']}, {provenance.state(data.get('provenance'))}{amended}; "
               "`memlab matrix`")
    return Table(caption, ["target", "config", "what it covers", "checked by",
                           "series vs pristine"], rows, [r[0] for r in rows], trailing_text=4)


def scenarios_block() -> list[str]:
    """Every guest scenario, its configs, and what the bench measures on it."""
    lines = ["| scenario | what it does | configs | also on base | bench row |",
             "| --- | --- | --- | --- | --- |"]
    for sc in SCENARIOS.values():
        lines.append(f"| `{sc.name}` | {sc.description} | {', '.join(sc.runs_on())} | "
                     f"{'yes' if sc.on_base else ''} | "
                     f"{', '.join(f'`{r.name}`' for r in sc.bench)} |")
    return lines


def cli_block() -> list[str]:
    """Each verb of the command line (and sub-verb), from its own argparse help."""

    def subparsers(p: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
        return next((a for a in p._actions if isinstance(a, argparse._SubParsersAction)),
                    None)

    def entries(p: argparse.ArgumentParser) -> list[str]:
        lines: list[str] = []
        sub = subparsers(p)
        if sub is None:
            return lines
        helps = {a.dest: a.help for a in sub._choices_actions}
        for verb, vp in sub.choices.items():
            usage = " ".join(vp.format_usage().split())[len("usage: "):]
            lines.append(f"- `{usage.replace(' [-h]', '')}`: {helps.get(verb, '')}.")
            lines += [f"  - `{', '.join(a.option_strings)}`: {a.help}" for a in vp._actions
                      if a.option_strings and a.help and a.dest != "help"]
            lines += entries(vp)
        return lines
    return entries(commands.parser())


def switches_table() -> Table:
    """The boot parameters that turn a fast path off, and the guest runs of
    the last whole `memlab test` runs (default and --full) that show each
    taking the slow path."""
    runs = [(name, rec) for name in ("default", "full")
            if (rec := _record_or_none(test_record(full=name == "full")))]

    def proof(scenario: str) -> str:
        passed = [f"{s.name.removeprefix('guest ')} ({name}.json)" for name, rec in runs
                  for s in rec.steps if s.name.startswith("guest ")
                  and scenario in s.passed_cases]
        return (f"`{scenario}` passed on " + ", ".join(passed) if passed
                else f"`{scenario}`: no passing run recorded")

    rows = [[f"`{sw.param}`", sw.turns_off, proof(f"without-{sw.name}")]
            for sw in switches.SWITCHES]
    source = "; ".join(f"results/test/{name}.json: {rec.date}, {provenance.state(rec.provenance)}"
                       for name, rec in runs) or "results/test/: no run recorded"
    return Table(f"lab/memlab/switches.py; {source} (`memlab test`)",
                 ["boot parameter", "turns off", "guest run that shows the slow path"], rows,
                 [sw.param for sw in switches.SWITCHES], trailing_text=2)


def debian_image_table() -> Table:
    """The Debian image's boots (results/debian-image.json): each kernel
    package, its memmap inits as its own debug line timed them, the HVO
    reproducer, the verdict."""
    header = ["kernel package", "memmap inits (fsdax bind, rebind, devdax bind)",
              "HVO reproducer", "test"]
    path = R / "debian-image.json"
    if not path.exists():
        return Table("results/debian-image.json: not recorded yet (`memlab image`)", header,
                     [], [], trailing_text=3)
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise LabError(f"results/debian-image.json: not a record ({e})") from None
    rows = []
    for kind, b in zip(("base", "patched"), data["boots"]):
        inits = ", ".join(f"{ms} ms" for _, ms in b["memmap_inits_ms"])
        hvo = b["hvo_bad_page_reports"]
        rows.append([f"{kind}: `{data['packages'][kind]}`", inits,
                     f"{hvo} Bad page state reports", "pass" if not b["problems"] else
                     "FAILED: " + "; ".join(b["problems"])])
    m = data["machine"]
    caption = (f"results/debian-image.json: {data['date']}, {data['release']} "
               f"image, {data['flavour']} flavour, {m['memory_gb']} GB RAM + "
               f"{m['pmem_gb']} GB pmem, {m['cpus']} vCPUs, {m['accel']}; "
               f"{provenance.state(data.get('provenance'))}; `memlab package && memlab image`")
    return Table(caption, header, rows, ["base", "patched"], trailing_text=3)


def packages_table() -> Table:
    """Each flavour's last package build (results/packages/): its time and
    how much of it the compiler cache served."""
    rows = []
    for path in sorted((R / "packages").glob("*.json")):
        data = json.loads(path.read_text())
        cache = data["compiler_cache"]
        total = cache["hits"] + cache["misses"]
        share = f"{100 * cache['hits'] / total:.0f}%" if total else "n/a"
        host = (data.get("provenance") or {}).get("host_cpu", "host not recorded")
        rows.append([data["flavour"], f"{data['seconds'] / 60:.0f} min", share,
                     f"{data.get('cpus', '?')} CPUs of {host}",
                     f"`{data['release']}` {data['version']}", data["date"],
                     provenance.state(data.get("provenance"))])
    return Table("results/packages/FLAVOUR.json; `memlab package --flavour FLAVOUR`",
                 ["flavour", "build time", "compiler cache hits", "machine", "package",
                  "built", "code"], rows, [r[0] for r in rows], trailing_text=3)


def package_by_hand_block() -> list[str]:
    """What `memlab package` does, as shell commands for a machine without
    the lab (package.by_hand(), the recipe the verb runs)."""
    return ["```sh", *package.by_hand(package.DEFAULT_FLAVOUR), "```"]


def bases_table() -> Table:
    """The kernel bases, one row each (kernel_base.py)."""
    rows = [[f"Linux {b.name}", f"`{b.package}` {b.version}", b.release,
             f"`{b.series.relative_to(paths.REPO)}/`: "
             f"{len(Series(b.series).patches())} patches", "; ".join(b.lacks)]
            for b in kernel_base.BASES.values()]
    return Table("lab/memlab/kernel_base.py", ["base", "Debian package, pinned", "release",
                                               "series", "what it lacks that its series adds"],
                 rows, [r[0] for r in rows], trailing_text=4)


def modules_block() -> list[str]:
    """The lab's modules floor by floor (floors.py), from the ground up:
    each one's lines and the first sentence of its docstring."""
    lines = ["| floor | module | lines | what it holds |", "| --- | --- | ---: | --- |"]
    for floor, names in FLOORS.items():
        for n, name in enumerate(names):
            source = paths.REPO / "lab" / "memlab" / f"{name}.py"
            text = source.read_text()
            doc = " ".join((ast.get_docstring(ast.parse(text)) or "").split())
            first = doc.split(". ")[0].rstrip(".").replace("|", "/")
            lines.append(f"| {floor if n == 0 else ''} | `{name}.py` | "
                         f"{len(text.splitlines())} | {first} |")
    return lines


R = paths.RESULTS
# Every block the documents carry, by the name a template gives.
BLOCKS: dict[str, Callable[[], Table | list[str]]] = {
    "icount": lambda: bench_table(bench.cited_dir("icount") / "bench.json",
                                  ["fsdax-rebind", "devdax-rebind", "device-private",
                                   "hugetlb-init-on-alloc"], references=True),
    "icount-quick": lambda: bench_table(bench.cited_dir("icount-quick") / "bench.json"),
    "hotplug-boot": lambda: bench_table(bench.cited_dir("hotplug-boot") / "bench.json",
                                        per_page=True),
    "debian": lambda: bench_table(bench.cited_dir("debian") / "bench.json", per_page=True),
    "waits": lambda: waits_table(bench.cited_dir("waits") / "bench.json"),
    "wall": lambda: parallel_table(bench.cited_dir("wall") / "bench.json"),
    "mainline": lambda: bases_bench_table("mainline", "icount-quick"),
    "mainline-hotplug-boot": lambda: bases_bench_table("mainline-hotplug-boot",
                                                       "hotplug-boot"),
    "mainline-debian": lambda: bases_bench_table("mainline-debian", "debian"),
    "native-memmap": lambda: native_memmap_table(native.DOCUMENTED),
    "native-online": lambda: native_online_table(native.DOCUMENTED),
    "native-clear": lambda: native_clear_table(native.DOCUMENTED),
    "native-clear-runs": lambda: native_clear_runs_table(native.DOCUMENTED, ""),
    "native-clear-read-4k": lambda: native_clear_runs_table(native.DOCUMENTED, "read 4K"),
    "native-clear-read-run": lambda: native_clear_runs_table(native.DOCUMENTED, "read run"),
    "native-hosts": native_hosts_table,
    "native-online-policy": native_online_policy_table,
    "references": references_table,
    "postings": postings_table,
    "ci": ci_table,
    "proof": proof_table,
    "selftests": selftests_table,
    "breaks-kunit": lambda: breaks_table("kunit"),
    "breaks-guests": lambda: breaks_table("guests"),
    "breaks-matrix": lambda: breaks_table("matrix", broken="deliberate mistake"),
    "breaks-mainline": lambda: breaks_table(
        "kunit", paths.results_of(kernel_base.MAINLINE) / "breaks.json"),
    "breaks-mainline-guests": lambda: breaks_table(
        "guests", paths.results_of(kernel_base.MAINLINE) / "breaks.json"),
    "scenarios": scenarios_block,
    "matrix": matrix_table,
    "cli": cli_block,
    "switches": switches_table,
    "modules": modules_block,
    "bases": bases_table,
    "packages": packages_table,
    "package-by-hand": package_by_hand_block,
    "debian-image": debian_image_table,
}
