"""PNG plots of bench samples: run with the lab venv's python, which has
matplotlib (`memlab bench` does that for you).

    python -m memlab.plot RESULTS_JSON OUTDIR
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def plot(result: dict, outdir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    mode = result["mode"]
    for name, row in result["scenarios"].items():
        # base, patched, and any other variant the run measured.
        variants = [v for v, xs in row["samples"].items() if xs]
        if not variants:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.boxplot([row["samples"][v] for v in variants], showfliers=False)
        for i, v in enumerate(variants, 1):
            xs = row["samples"][v]
            ax.scatter([i] * len(xs), xs, s=10, alpha=0.6)
        ax.set_xticks(range(1, len(variants) + 1), variants)
        ax.set_ylabel("microseconds" + (" (emulated, -icount)" if mode == "icount" else
                                        " (emulated, TCG wall)" if mode == "wall" else ""))
        ax.set_title(f"{name}\n{row['metric']}", fontsize=10)
        ax.set_ylim(bottom=0)
        fig.tight_layout()
        path = outdir / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    for path in plot(json.loads(Path(argv[0]).read_text()), outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
