"""`memlab demo`: build base and patched, boot each once on the bench's
fsdax rebind scenario, print their memmap_init_zone_device() times.

A first look, not the benchmark: one boot per kernel, nothing written to
results/ (deterministic under -icount, where the times are emulated
instruction counts, not real time).
"""
from __future__ import annotations

from statistics import median

from . import bench, build, guest, kernel_tree
from .runner import say


def run(icount: bool = True, pmem_gb: int = 4) -> int:
    sc = bench.choose(quick=True, only=["fsdax-rebind"], pmem_gb=pmem_gb)[0]
    if not kernel_tree.has_tree():
        kernel_tree.source()
    for kernel in ("base", "patched"):
        guest.build_kernel(kernel, "lab")
    mode = "icount" if icount else "wall"
    medians = {}
    for variant in (bench.BASE, bench.PATCHED):
        m = bench.measure(sc, variant, mode)
        print(f"{variant.name:8} first bind {m.first_bind_us or 0:12.1f} us")
        for i, us in enumerate(m.samples, 1):
            print(f"{variant.name:8} rebind {i:<3} {us:12.1f} us")
        medians[variant.name] = median(m.samples)
    print(f"\nmemmap_init_zone_device(), {sc.metric}, median of "
          f"{len(m.samples)} rebinds ({guest.MODES[mode].label})")
    print("| kernel | rebind median (us) |\n|---|---:|")
    for name, med in medians.items():
        print(f"| {name} | {med:.1f} |")
    say(f"patched/base = {medians['patched'] / medians['base']:.3f}")
    return 0
