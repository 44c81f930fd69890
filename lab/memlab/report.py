"""A bench run's own report: its table (results/<dir>/bench.md) and plots.
The documents' tables are tables.py's, written by documents.py."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import deps, paths
from .results import BASE, ONE_THREAD, ONE_THREAD_ARG, PATCHED, REPEATABLE, Result, Row, Stats
from .runner import LabError, run_quiet
from .catalog import bench_rows


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


def _both_kernels(result: Result, figure: Callable[[Row, str], float | None],
                  cells: Callable[[Row, float, float], list[str]], intro: str,
                  header: list[str]) -> list[str]:
    """A section of the rows that have @figure on base and patched."""
    rows = []
    for name, row in result.rows.items():
        b, p = figure(row, BASE), figure(row, PATCHED)
        if b is not None and p is not None:
            rows.append("| " + " | ".join([name, *cells(row, b, p)]) + " |")
    if not rows:
        return []
    return ["", intro, "", "| " + " | ".join(header) + " |",
            "|---|" + "---:|" * (len(header) - 1), *rows]


def per_page_markdown(result: Result) -> list[str]:
    """Under -icount a nanosecond is an instruction: the medians per struct
    page, for rows whose timed calls all cover the same number of pages."""
    if result.mode != "icount":
        return []
    return _both_kernels(
        result, Row.per_page,
        lambda row, b, p: [str(row.pages_per_call[0]), f"{b:.1f}", f"{p:.1f}"],
        "Instructions per struct page (icount: 1 ns = 1 instruction), medians:",
        ["scenario", "pages per call", "base", "patched"])


def waits_markdown(result: Result) -> list[str]:
    """A user's whole waits: the share of each spent in memmap init and the
    handover to the buddy allocator (the lab patches' timed calls)."""
    return _both_kernels(
        result, Row.share, lambda row, b, p: [f"{100 * b:.1f}%", f"{100 * p:.1f}%"],
        "Share of each wait in memmap init and the handover to the buddy allocator "
        "(the timed calls inside it), medians:", ["scenario", "base", "patched"])


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
        lines.append(_bench_row(name, row.metric, row.stats, str(bench_rows()[name].reference if name in bench_rows() else "")))
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
    lines += waits_markdown(result)
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
