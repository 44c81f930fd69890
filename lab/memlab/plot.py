"""PNG plots of a bench run: run with the lab venv's python, which has
matplotlib (`memlab bench` does that for you).

    python -m memlab.plot RESULTS_JSON OUTDIR

summary.png: every row's patched/base beside the reference posting's, with
the mode and host in the caption. <row>.png: the samples of each kernel,
only where samples vary (wall clock, KVM); under -icount they are constant.

Given a native record (`memlab bench native`), native.png: each memmap
loop as a share of the best streaming fill on 1 and 2 threads, and the
clearing rows.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import json

from .guest import MODES
from .native import summarize
from .results import Result
from .catalog import bench_rows
from .postings import Reference
from .tables import NATIVE_CLEARS, NATIVE_LOOPS


def summary(result: Result, outdir: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, row in result.rows.items() if row.ratio() is not None]
    ours = [result.rows[n].ratio() or 0.0 for n in names]
    refs = [r.reference.ratio if (r := bench_rows().get(n)) and
            isinstance(r.reference, Reference) else None for n in names]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.55 * max(1, len(names))))
    y = list(range(len(names)))
    ax.barh([i - 0.2 for i in y], ours, height=0.4, label="this run: patched/base")
    ref_y = [i + 0.2 for i, r in zip(y, refs) if r is not None]
    ax.barh(ref_y, [r for r in refs if r is not None], height=0.4,
            label="posting (quoted)")
    for i, v in zip(y, ours):
        ax.text(v + 0.01, i - 0.2, f"{v:.3f}", va="center", fontsize=8)
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(0, max([1.1, *ours]))
    ax.set_xlabel("patched / base (median time; lower is faster)")
    ax.legend(loc="lower right", fontsize=8)
    caption = (f"{result.mode}: {result.label}. Host {result.host_cpu}, {result.date}"
               + (", quick sizes" if result.quick else ""))
    fig.suptitle("\n".join(textwrap.wrap(caption, 90)), fontsize=9)
    fig.tight_layout()
    path = outdir / "summary.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def distributions(result: Result, outdir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    unit = MODES[result.mode].plot_unit if result.mode in MODES else "microseconds"
    written = []
    for name, row in result.rows.items():
        # base, patched, and any other variant the run measured.
        variants = [v for v, xs in row.samples.items() if xs]
        if not variants:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.boxplot([row.samples[v] for v in variants], showfliers=False)
        for i, v in enumerate(variants, 1):
            xs = row.samples[v]
            ax.scatter([i] * len(xs), xs, s=10, alpha=0.6)
        ax.set_xticks(range(1, len(variants) + 1), variants)
        ax.set_ylabel(unit)
        ax.set_title("\n".join([name, *textwrap.wrap(row.metric, 60)]), fontsize=9)
        ax.set_ylim(bottom=0)
        fig.tight_layout()
        path = outdir / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def plot(result: Result, outdir: Path) -> list[Path]:
    written = [summary(result, outdir)]
    if result.mode != "icount":
        written += distributions(result, outdir)
    return written


def native(data: dict, outdir: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summarize(data["records"])
    by = {(r["group"], r["name"], r["threads"]): r for r in rows}
    threads = sorted({r["threads"] for r in rows})
    fig, (loops, clears) = plt.subplots(1, 2, figsize=(11, 4.2),
                                        gridspec_kw={"width_ratios": [3, 2]})
    labels = list(NATIVE_LOOPS.values())
    width = 0.8 / len(threads)
    for k, t in enumerate(threads):
        pcts = [by[(g, n, t)]["pct_of_limit"] if (g, n, t) in by else 0
                for g, n in NATIVE_LOOPS]
        ys = [i + (k - (len(threads) - 1) / 2) * width for i in range(len(labels))]
        loops.barh(ys, pcts, height=width, label=f"{t} thread{'s' if t > 1 else ''}")
        for y, v in zip(ys, pcts):
            loops.text(v + 1, y, f"{v:.0f}%", va="center", fontsize=7)
    loops.set_yticks(range(len(labels)), labels, fontsize=8)
    loops.invert_yaxis()
    loops.set_xlim(0, 115)
    loops.set_xlabel("share of the best streaming fill of the same buffer (higher is faster)")
    loops.set_title(f"memmap of a {data['meta']['device_gb']:g} GB device", fontsize=9)
    loops.legend(loc="upper right", fontsize=8)
    clabels = list(NATIVE_CLEARS.values())
    for k, t in enumerate(threads):
        ms = [1000 * by[("clear", n, t)]["median_s"] if ("clear", n, t) in by else 0
              for n in NATIVE_CLEARS]
        ys = [i + (k - (len(threads) - 1) / 2) * width for i in range(len(clabels))]
        clears.barh(ys, ms, height=width, label=f"{t} thread{'s' if t > 1 else ''}")
        for y, v in zip(ys, ms):
            clears.text(v + 1, y, f"{v:.1f} ms", va="center", fontsize=7)
    clears.set_xlim(0, 1.3 * max([1.0, *(1000 * r["median_s"] for r in rows
                                        if r["group"] == "clear")]))
    clears.set_yticks(range(len(clabels)), clabels, fontsize=8)
    clears.invert_yaxis()
    clears.set_xlabel("median time to clear 1 GiB, ms (lower is faster)")
    clears.set_title("clearing pages", fontsize=9)
    clears.legend(loc="lower right", fontsize=8)
    runs = len(rows[0]["seconds"]) if rows else 0
    fig.suptitle(f"memlab bench native: real hardware, {data['host_cpu']}, {data['date']}, "
                 f"medians of {runs} runs", fontsize=9)
    fig.tight_layout()
    path = outdir / "native.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    data = json.loads(Path(argv[0]).read_text())
    written = [native(data, outdir)] if "records" in data else plot(Result.load(Path(argv[0])),
                                                                     outdir)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
