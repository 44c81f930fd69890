"""PNG plots of a bench run: run with the lab venv's python, which has
matplotlib (`memlab bench` does that for you).

    python -m memlab.plot RESULTS_JSON OUTDIR

summary.png: every row's patched/base beside the reference posting's, with
the mode and host in the caption. <row>.png: the samples of each kernel,
only where samples vary (wall clock, KVM); under -icount they are constant.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from .guest import MODES
from .results import Result
from .scenarios import Reference, bench_rows


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
            label="reference posting (real hardware)")
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


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    for path in plot(Result.load(Path(argv[0])), outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
