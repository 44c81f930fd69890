"""`memlab demo`: build base and patched, boot each once on the bench's
fsdax rebind scenario, print their memmap_init_zone_device() times.

A first look, not the benchmark: one boot per kernel, nothing written to
results/ (deterministic under -icount, where the times are emulated
instruction counts, not real time).
"""
from __future__ import annotations

from statistics import median

from . import bench, build, kernel_tree
from .runner import say


def run(icount: bool = True, pmem_gb: int = 4) -> int:
    if not kernel_tree.has_tree():
        kernel_tree.source()
    for variant in ("base", "patched"):
        build.build(variant, "lab")
    sc = next(s for s in bench.scenarios(quick=True, pmem_gb=pmem_gb)
              if s.name == "fsdax-rebind")
    mode = "icount" if icount else "wall"
    medians = {}
    for variant in ("base", "patched"):
        rebinds, first, _, log = bench.measure(sc, variant, mode)
        print(f"{variant:8} first bind {first:12.1f} us")
        for i, us in enumerate(rebinds, 1):
            print(f"{variant:8} rebind {i:<3} {us:12.1f} us")
        medians[variant] = median(rebinds)
    print(f"\nmemmap_init_zone_device(), {sc.metric}, median of "
          f"{len(rebinds)} rebinds ({bench.MODE_LABELS[mode]})")
    print("| kernel | rebind median (us) |\n|---|---:|")
    for variant, med in medians.items():
        print(f"| {variant} | {med:.1f} |")
    say(f"patched/base = {medians['patched'] / medians['base']:.3f}")
    return 0
