"""`memlab bench native`: the store patterns on this machine's real CPU.

The struct page layout comes from the built patched kernel (kbuild compiles
lab/native/memlab_offsets.c to assembly, asm-offsets style), and the
non-temporal copy is the patch's own <asm/stream_copy.h>, compiled in
userspace through a two-file shim.
"""
from __future__ import annotations

import json
import re
import shutil
import statistics
import time
from pathlib import Path

from . import arches, build, deps, hostinfo, kernel_tree, paths
from .runner import LabError, run_logged, run_quiet, say

NATIVE_SRC = paths.REPO / "lab" / "native"
WORK = paths.BUILD / "native"
_ASM_OFFSET = re.compile(r'"->(\w+) \$?(-?\d+)')

SHIM = {
    # glibc's <sys/cdefs.h> has its own __always_inline.
    "linux/compiler.h": "#include <sys/cdefs.h>\n#ifndef __always_inline\n"
                        "#define __always_inline inline __attribute__((always_inline))\n"
                        "#endif\n",
    "linux/types.h": "#include <stdint.h>\ntypedef uint64_t u64;\ntypedef uint32_t u32;\n",
}


def parse_offsets(asm: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in _ASM_OFFSET.finditer(asm)}


def generate_offsets(out: Path) -> dict[str, int]:
    kmod = WORK / "kmod"
    shutil.rmtree(kmod, ignore_errors=True)
    kmod.mkdir(parents=True)
    for name in ("memlab_offsets.c", "Kbuild"):
        shutil.copy(NATIVE_SRC / name, kmod / name)
    run_logged(["make", "-C", str(paths.KERNEL_TREE), *build.make_args(arches.GUEST_ARCH, out),
                f"M={kmod}", "memlab_offsets.s"], paths.LOGS / "native.log",
               "native: struct page offsets from the kernel build", env=build.ccache_env())
    offsets = parse_offsets((kmod / "memlab_offsets.s").read_text())
    if "STRUCT_PAGE_SIZE" not in offsets:
        raise LabError(f"no offsets in {kmod / 'memlab_offsets.s'}")
    return offsets


def compile_bench(offsets: dict[str, int]) -> Path:
    kinc = WORK / "kinc"
    for rel, text in SHIM.items():
        (kinc / rel).parent.mkdir(parents=True, exist_ok=True)
        (kinc / rel).write_text(text)
    for rel, src in (("asm/stream_copy.h", "arch/x86/include/asm/stream_copy.h"),
                     ("asm-generic/stream_copy.h", "include/asm-generic/stream_copy.h")):
        (kinc / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.KERNEL_TREE / src, kinc / rel)
    header = WORK / "memlab_offsets.h"
    header.write_text("".join(f"#define {k} {v}\n" for k, v in sorted(offsets.items())))
    binary = WORK / "memmap_bench"
    run_logged(["gcc", "-O2", "-pthread", "-DCONFIG_X86_64", "-include", str(header),
                "-I", str(kinc), str(NATIVE_SRC / "memmap_bench.c"), "-o", str(binary)],
               paths.LOGS / "native.log", "native: compile")
    return binary


# Rows measured against the best non-zero streaming fill ("limit") of the
# same buffer; zeroing has its own, faster mechanism and is shown in GB/s only.
RELATIVE_GROUPS = ("memmap", "limit")


def summarize(records: list[dict]) -> list[dict]:
    """Median GB/s per kernel, and its share of the best streaming fill at
    that thread count."""
    rows = []
    for r in records:
        if "seconds" not in r:
            continue
        med = statistics.median(r["seconds"])
        rows.append({**r, "median_s": med, "gbps": r["bytes"] / med / 1e9,
                     "min_s": min(r["seconds"]), "max_s": max(r["seconds"])})
    for row in rows:
        limit = max((x["gbps"] for x in rows
                     if x["group"] == "limit" and x["threads"] == row["threads"]), default=0)
        row["pct_of_limit"] = (100 * row["gbps"] / limit
                               if limit and row["group"] in RELATIVE_GROUPS else None)
    return rows


def markdown(meta: dict, rows: list[dict], cpu: str) -> str:
    lines = [f"### memlab bench native (real hardware: {cpu})", "",
             f"struct page {meta['struct_page_size']} bytes (from the built kernel); "
             f"memmap of a {meta['device_gb']:.0f} GB device = "
             f"{meta['memmap_bytes'] / 2**30:.2f} GiB; clears over 1 GiB; "
             f"median of {len(rows[0]['seconds']) if rows else 0} runs. With 2 threads "
             "the buffer is shared out in whole sections' memmaps, as the kernel shares "
             "a ZONE_DEVICE range among its threads. The online groups onlines the "
             "same memmap in memory blocks of 128 MB and of 2 GB: each block's memmap "
             "init, then the buddy allocator's pass over its struct pages, as "
             "online_pages() runs them (one thread).", "",
             "| group | kernel | threads | median (ms) | min-max (ms) | GB/s "
             "| % of best streaming fill | time vs 1 thread |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    one_thread = {(r["group"], r["name"]): r["median_s"] for r in rows if r["threads"] == 1}
    for r in rows:
        pct = f"{r['pct_of_limit']:.0f}%" if r["pct_of_limit"] is not None else ""
        alone = one_thread.get((r["group"], r["name"]))
        vs_one = f"{r['median_s'] / alone:.2f}" if alone and r["threads"] > 1 else ""
        lines.append(f"| {r['group']} | {r['name']} | {r['threads']} | {1000 * r['median_s']:.1f} | "
                     f"{1000 * r['min_s']:.1f}-{1000 * r['max_s']:.1f} | {r['gbps']:.2f} | {pct} "
                     f"| {vs_one} |")
    return "\n".join(lines) + "\n"


def run(device_gb: float = 100.0) -> int:
    deps.ensure("build")
    if not kernel_tree.has_tree():
        kernel_tree.source()
    built = build.build("patched", "lab")
    WORK.mkdir(parents=True, exist_ok=True)
    offsets = generate_offsets(built.out)
    binary = compile_bench(offsets)
    say(f"native: running {binary.name} ({device_gb:.0f} GB device memmap)")
    res = run_quiet([str(binary), str(device_gb)], check=False)
    if res.returncode != 0:
        raise LabError(f"native benchmark failed ({res.returncode}):\n{res.stderr}")
    records = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    meta = records[0]
    rows = summarize(records)
    cpu = hostinfo.cpu_model()
    table = markdown(meta, rows, cpu)
    paths.RESULTS.mkdir(exist_ok=True)
    (paths.RESULTS / "native.json").write_text(json.dumps(
        {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host_cpu": cpu,
         "offsets": offsets, "meta": meta, "records": records}, indent=1) + "\n")
    (paths.RESULTS / "native.md").write_text(table)
    print(table)
    from . import documents, report
    report.write_plots(paths.RESULTS / "native.json", paths.RESULTS)
    documents.refresh()     # the documents' figures that read these results
    return 0
