"""Reports written from results: a bench run's table and plots, and the
generated blocks of the README and the cover letter (`memlab report`).

A generated block in a document names its table on its first line. In
markdown it runs from `<!-- memlab report: NAME -->` to `<!-- end of
memlab report -->`; in the plain-text cover letter it is the table's
caption line, `  memlab report NAME: <where the numbers come from>`, its
continuation lines and the table, up to the next blank line. Only these
blocks are rewritten; the prose around them is the authors'.
"""
from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import deps, kernel_base, native, paths
from .results import (BASE, ONE_THREAD, ONE_THREAD_ARG, PATCHED, REPEATABLE, Result, Row,
                      Stats)
from .runner import LabError, run_quiet, say
from .scenarios import Reference, bench_rows
from .series import COVER_LETTER


def reference(name: str) -> Reference | str:
    row = bench_rows().get(name)
    return row.reference if row else ""


# --- a bench run's own table (results/<dir>/bench.md) ---

def _cell(s: Stats | None) -> str:
    return f"{s.median:.1f}" if s else "n/a"


def _span(s: Stats | None) -> str:
    return f"{s.minimum:.1f}-{s.maximum:.1f}" if s else "n/a"


def _bench_row(name: str, metric: str, stats: dict[str, Stats | None], ref: str) -> str:
    b, p = stats.get(BASE), stats.get(PATCHED)
    ratio = f"{p.median / b.median:.3f}" if b and p and b.median else "n/a"
    n = f"{b.n if b else 0}/{p.n if p else 0}"
    return (f"| {name} | {metric} | {_cell(b)} | {_cell(p)} | {ratio} | {_span(b)} | "
            f"{_span(p)} | {n} | {ref} |")


def _parallel_row(name: str, stats: dict[str, Stats | None]) -> str | None:
    one, all_, base = stats.get(ONE_THREAD), stats.get(PATCHED), stats.get(BASE)
    if not one:
        return None
    if not all_ or not base:
        return f"| {name} | {one.median:.1f} | n/a | n/a | n/a | | | |"
    ratio = f"{all_.median / one.median:.3f}" if one.median else "n/a"
    return (f"| {name} | {one.median:.1f} | {all_.median:.1f} | {ratio} | "
            f"{base.median:.1f} | {_span(one)} | {_span(all_)} | {one.n}/{all_.n} |")


def parallel_markdown(result: Result) -> list[str]:
    """The patched kernel on one thread per range vs on all vCPUs."""
    vcpus = result.guest_vcpus
    if vcpus < 2:
        return ["", f"Parallel memmap init: not measured in this mode. The guests have "
                f"{vcpus} vCPU; under -icount all vCPUs share one instruction clock, so "
                "a parallel gain cannot show here (see `memlab bench --mode wall`)."]
    rows = [r for name, row in result.rows.items() if (r := _parallel_row(name, row.stats))]
    if not rows:
        return []
    return ["", f"Parallel memmap init, patched kernel, {vcpus} vCPUs: each range on one "
            f"thread (`{ONE_THREAD_ARG}`) vs shared among all vCPUs "
            "(the default), and base:", "",
            "| scenario | one thread median (us) | all vCPUs median (us) | all/one | "
            "base median (us) | one min-max | all min-max | n |",
            "|---|---:|---:|---:|---:|---|---|---:|", *rows]


def per_page_markdown(result: Result) -> list[str]:
    """Under -icount a nanosecond is an instruction: the medians per struct
    page, for rows whose timed calls all cover the same number of pages."""
    if result.mode != "icount":
        return []
    rows = []
    for name, row in result.rows.items():
        b, p = row.per_page(BASE), row.per_page(PATCHED)
        if b is not None and p is not None:
            rows.append(f"| {name} | {row.pages_per_call[0]} | {b:.1f} | {p:.1f} |")
    if not rows:
        return []
    return ["", "Instructions per struct page (icount: 1 ns = 1 instruction), medians:", "",
            "| scenario | pages per call | base | patched |", "|---|---:|---:|---:|", *rows]


def markdown(result: Result) -> str:
    lines = [f"### memlab bench ({result.mode}: {result.label})", "",
             f"{result.date}, host {result.host_cpu}, {result.guest_vcpus} vCPU guests, "
             f"kernels {result.kernels.get('base', '?')} (base) / "
             f"{result.kernels.get('patched', '?')} (patched)"
             + (", quick sizes" if result.quick else "")
             + f", {result.rounds} alternating boots per kernel"
             + (f", bench took {result.elapsed_s} s" if result.elapsed_s is not None else ""),
             "", f"Timing: {result.timing}." if result.timing else "", "",
             "| scenario | metric | base median (us) | patched median (us) | "
             "patched/base | base min-max | patched min-max | n | reference posting |",
             "|---|---|---:|---:|---:|---|---|---:|---|"]
    for name, row in result.rows.items():
        lines.append(_bench_row(name, row.metric, row.stats, str(reference(name))))
        fb = row.first_bind_stats
        if fb:
            lines.append(_bench_row(f"{name} (first bind)", "memmap init of the first bind",
                                    fb, ""))
    if result.repeatability:
        lines += ["", f"Repeatability (medians of each round, must agree within "
                  f"{100 * REPEATABLE:.0f}%):"]
        lines += [f"- {key}: {', '.join(f'{m:.1f}' for m in r.round_medians)} us, "
                  f"spread {100 * r.spread:.2f}%" for key, r in result.repeatability.items()]
    lines += per_page_markdown(result)
    lines += parallel_markdown(result)
    return "\n".join(lines) + "\n"


def write_bench(result: Result, outdir: Path) -> None:
    """The run's JSON and table as results/latest.* and in outdir, with plots."""
    table = markdown(result)
    outdir.mkdir(parents=True, exist_ok=True)
    for stem in (paths.RESULTS / "latest", outdir / "bench"):
        result.write(stem.with_suffix(".json"))
        stem.with_suffix(".md").write_text(table)
    print(table)
    write_plots(outdir / "bench.json", outdir)


def write_plots(result_json: Path, outdir: Path) -> list[Path]:
    """PNGs drawn by the venv's python (matplotlib): plot.py."""
    env = deps.venv_env()
    env["PYTHONPATH"] = str(paths.REPO / "lab")
    res = run_quiet([str(paths.VENV / "bin" / "python3"), "-m", "memlab.plot",
                     str(result_json), str(outdir)], env=env, check=False)
    if res.returncode != 0:
        raise LabError(f"plotting failed:\n{res.stdout}{res.stderr}")
    return [Path(p) for p in res.stdout.split()]


# --- generated blocks of the README and the cover letter (`memlab report`) ---

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


def duration(us: float, scale: float | None = None) -> str:
    """A time in the unit people read it in, chosen by `scale` (the row's
    largest time, so that a row keeps one unit) or by the time itself."""
    scale = us if scale is None else scale
    if scale >= 1e6:
        return f"{us / 1e6:.3f} s"
    if scale >= 1e4:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} us"


def _ratio(x: float | None) -> str:
    return f"{x:.3f}" if x is not None else "n/a"


def _median(row: Row, variant: str) -> str:
    m = row.median(variant)
    scale = max(x for v in row.samples if (x := row.median(v)) is not None) if m else None
    return duration(m, scale) if m is not None else "n/a"


def _bench_caption(source: Path, result: Result) -> str:
    rounds = f"{result.rounds} alternating boots per kernel"
    if result.repeatability:
        worst = max(r.spread for r in result.repeatability.values())
        rounds += ", whose medians agree " + (f"within {100 * worst:.2g}%" if worst
                                               else "to the last digit")
    return (f"{source.relative_to(paths.REPO)}: {result.date}, {result.host_cpu}, "
            f"{result.label}, {rounds}")


def _row_label(row: Row, variant: str = PATCHED) -> str:
    n = len(row.samples.get(variant, []))
    return f"{row.metric}, median of {n}"


def _labels(names: list[str]) -> list[str]:
    """The rows' short names (scenarios.py), for narrow tables."""
    rows = bench_rows()
    return [rows[n].label or n if n in rows else n for n in names]


def bench_table(source: Path, names: list[str] | None = None, per_page: bool = False,
                references: bool = False) -> Table:
    """base, patched and patched/base of a bench run's rows; optionally
    instructions per page (icount) and the postings' numbers."""
    result = Result.load(source)
    header = ["scenario", "base", "patched", "patched/base"]
    header += ["instructions per page"] if per_page else []
    header += ["reference posting (real hardware)"] if references else []
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


def _native(source: Path) -> tuple[dict, list[dict]]:
    try:
        data = json.loads(source.read_text())
        return data, native.summarize(data["records"])
    except (OSError, ValueError, KeyError) as e:
        raise LabError(f"{source}: not a native result ({type(e).__name__}: {e})") from None


def _native_caption(source: Path, data: dict, rows: list[dict]) -> str:
    runs = len(rows[0]["seconds"]) if rows else 0
    return (f"{source.relative_to(paths.REPO)}: {data['date']}, {data['host_cpu']}, "
            f"real hardware, medians of {runs} runs")


# What each native loop is, in the tables' words.
BASE_INIT = f"{kernel_base.current().name}'s per-field init"
NATIVE_LOOPS = {
    ("memmap", "slow"): BASE_INIT,
    ("memmap", "copy"): "template copy, plain stores",
    ("memmap", "copy_nt"): "per-page MOVNTI copy (patch 7)",
    ("memmap", "template_nt"): "MOVNTI runs from registers (patch 8)",
    ("limit", "movnti_fill"): "limit: MOVNTI fill",
    ("limit", "ymm_nt_fill"): "limit: widest streaming fill",
}
NATIVE_ONLINE = {"online 128M": "in 128 MB blocks",
                 "online 2G": "in 2 GB blocks"}


def native_memmap_table(source: Path) -> Table:
    data, rows = _native(source)
    by = {(r["group"], r["name"], r["threads"]): r for r in rows}
    threads = sorted({r["threads"] for r in rows})
    header = [f"loop ({data['meta']['device_gb']:g} GB device's memmap)"]
    for t in threads:
        header += [f"{t} thread{'s' if t > 1 else ''}", "% of best"]
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
    data, rows = _native(source)
    by = {(r["group"], r["name"]): r for r in rows if r["threads"] == 1}
    header = [f"onlining {data['meta']['device_gb']:g} GB", BASE_INIT.replace(" per-field", ""),
              "plain template", "streamed template"]
    out = [[label] + [f"{1000 * by[(group, k)]['median_s']:.1f} ms" if (group, k) in by
                      else "n/a" for k in ("slow", "plain", "stream")]
           for group, label in NATIVE_ONLINE.items()]
    return Table(_native_caption(source, data, rows), header, out, [r[0] for r in out])


def references_table() -> Table:
    refs = {n: r.reference for n, r in bench_rows().items() if isinstance(r.reference, Reference)}
    rows = [[ref.what, f"{ref.base:g} {ref.unit}", f"{ref.patched:g} {ref.unit}",
             f"{ref.ratio:.3f}"] for ref in refs.values()]
    return Table("the reference postings, real hardware", ["posting", "base", "patched",
                                                           "patched/base"],
                 rows, [r[0] for r in rows])


R = paths.RESULTS
# Every table the documents carry, by the name their markers give.
TABLES: dict[str, Callable[[], Table]] = {
    "icount": lambda: bench_table(R / "icount" / "bench.json",
                                  ["fsdax-rebind", "devdax-rebind", "device-private",
                                   "hugetlb-init-on-alloc"], references=True),
    "icount-quick": lambda: bench_table(R / "icount-quick" / "bench.json"),
    "hotplug-boot": lambda: bench_table(
        R / "icount-boot-memmap+kmem-online+kmem-online-pages" / "bench.json",
        ["kmem-online", "kmem-online-pages", "boot-memmap"], per_page=True),
    "wall": lambda: parallel_table(R / "wall" / "bench.json"),
    "native-memmap": lambda: native_memmap_table(R / "native.json"),
    "native-online": lambda: native_online_table(R / "native.json"),
    "references": references_table,
}

_MD_BEGIN = re.compile(r"^<!-- memlab report: (?P<name>[\w-]+) -->$")
_MD_END = "<!-- end of memlab report -->"
_TEXT_BEGIN = re.compile(r"^  memlab report (?P<name>[\w-]+):( |$)")


def regenerate(text: str, markdown_doc: bool) -> tuple[str, list[str]]:
    """The document with every generated block rewritten, and the names
    of the blocks."""
    lines, out, names = text.split("\n"), [], []
    begin = _MD_BEGIN if markdown_doc else _TEXT_BEGIN
    i = 0
    while i < len(lines):
        m = begin.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        name = m.group("name")
        if name not in TABLES:
            raise LabError(f"unknown report table {name!r} (known: {', '.join(TABLES)})")
        names.append(name)
        table = TABLES[name]()
        if markdown_doc:
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j] == _MD_END or begin.match(lines[j])), None)
            if end is None or lines[end] != _MD_END:
                raise LabError(f"report block {name!r} has no end marker ({_MD_END})")
            out += [lines[i], *table.markdown(), _MD_END]
            i = end + 1
        else:
            end = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
            out += table.text(name)
            i = end     # the blank line stays
    return "\n".join(out), names


DOCUMENTS = {paths.REPO / "README.md": True, paths.PATCHES / COVER_LETTER: False}


def run(check: bool = False) -> int:
    """Rewrite the documents' generated blocks from results/ (or, with
    check, only say which would change)."""
    stale = []
    for doc, markdown_doc in DOCUMENTS.items():
        text = doc.read_text()
        fresh, names = regenerate(text, markdown_doc)
        rel = doc.relative_to(paths.REPO)
        if fresh != text:
            stale.append(str(rel))
            if not check:
                doc.write_text(fresh)
        say(f"{rel}: {len(names)} generated tables ({', '.join(names) or 'none'})"
            + (", out of date" if fresh != text else ", up to date"))
    if check and stale:
        say("run `memlab report` to bring them up to date: " + ", ".join(stale))
        return 1
    return 0
