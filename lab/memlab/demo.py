"""`memlab demo`: build base and patched, boot each on the same fsdax rebind
scenario, print their memmap_init_zone_device() lines side by side.

A first look, not the benchmark: one boot per kernel (deterministic under
--icount, where the times are emulated instruction counts, not real time).
"""
from __future__ import annotations

from statistics import median

from . import build, guest, kernel_tree
from .runner import LabError, say

REBINDS = 3


def run(icount: bool = True, pmem_gb: int = 4) -> int:
    if not kernel_tree.has_tree():
        kernel_tree.source()
    rows = []
    for variant in ("base", "patched"):
        build.build(variant, "lab")
    for variant in ("base", "patched"):
        spec = guest.GuestSpec(variant=variant, script="fsdax-rebind",
                               memory_gb=2 + max(1, pmem_gb // 4), pmem_gb=pmem_gb,
                               icount=icount, env={"REBINDS": str(REBINDS)})
        result = guest.boot_and_run(spec)
        if not result.ok:
            raise LabError(f"{variant}: " + "; ".join(result.problems()))
        inits = result.console.memmap_inits
        if not inits:
            raise LabError(f"{variant}: no memmap_init_zone_device() line on the console")
        for i, init in enumerate(inits):
            print(f"{variant:8} {'bind' if i == 0 else f'rebind {i}':9} "
                  f"{init.pages:9d} pages {init.us:12.1f} us")
        rows.append((variant, inits[0].pages, median(i.us for i in inits[1:] or inits),
                     result.accel))
    mode = "emulated, TCG -icount: instruction-count time" if icount else \
        "emulated, TCG wall clock"
    print(f"\nmemmap_init_zone_device(), fsdax map=dev {pmem_gb} GB, median of "
          f"{REBINDS} rebinds ({mode})")
    print("| kernel | pages | rebind median (us) |\n|---|---:|---:|")
    for variant, pages, med, _ in rows:
        print(f"| {variant} | {pages} | {med:.1f} |")
    ratio = rows[1][2] / rows[0][2] if rows[0][2] else float("nan")
    say(f"patched/base = {ratio:.3f}")
    return 0
