"""`memlab bench native`: the store patterns on this machine's real CPU.

The struct page layout comes from the built patched kernel (kbuild compiles
lab/native/memlab_offsets.c to assembly, asm-offsets style), the
streaming store is the patch's own <asm/stream_store.h>, compiled in
userspace through a three-file shim, and the clearing variants are the
patch's own arch/x86/lib/clear_page_64.S, assembled through another.
"""
from __future__ import annotations

import json
import re
import shutil
import statistics
import time
from pathlib import Path

from . import arches, build, deps, hostinfo, kernel_tree, paths, provenance, report
from .runner import LabError, run_logged, run_quiet, say

NATIVE_SRC = paths.REPO / "lab" / "native"
WORK = paths.BUILD / "native"
# One record per kind of CPU (hostinfo.cpu_slug()), with its table: the
# clearing and onlining rules rest on all.
HOSTS = paths.RESULTS / "native-hosts"
# The CPU whose record the documents quote, and whose run draws their plot
# (results/native.png): their prose on the store loops and on clearing is
# written around its figures, CLZERO's among them.
DOCUMENTED_CPU = "amd-family26-model2"
DOCUMENTED = HOSTS / f"{DOCUMENTED_CPU}.json"
_ASM_OFFSET = re.compile(r'"->(\w+) \$?(-?\d+)')

SHIM = {
    # glibc's <sys/cdefs.h> has its own __always_inline.
    "linux/compiler.h": "#include <sys/cdefs.h>\n#ifndef __always_inline\n"
                        "#define __always_inline inline __attribute__((always_inline))\n"
                        "#endif\n",
    "linux/types.h": "#include <stdint.h>\ntypedef uint64_t u64;\ntypedef uint32_t u32;\n",
    # x86-64's wmb() (__wmb() in arch/x86/include/asm/barrier.h).
    "asm/barrier.h": "#define wmb() asm volatile(\"sfence\" ::: \"memory\")\n",
}

# The kernel's assembler macros that clear_page_64.S uses, for userspace:
# no exports, no exception tables (the clear_user code is never called).
ASM_SHIM = {
    "linux/export.h": "#define EXPORT_SYMBOL(x)\n#define EXPORT_SYMBOL_GPL(x)\n"
                      "#define EXPORT_SYMBOL_NS_GPL(x, ns)\n",
    "linux/linkage.h": "#define SYM_FUNC_START(x) .globl x; .type x, @function; x:\n"
                       "#define SYM_FUNC_END(x) .size x, .-x\n",
    "asm/asm.h": "#define RET ret\n#define _ASM_EXTABLE_UA(from, to)\n",
}
CLEAR_ASM = "arch/x86/lib/clear_page_64.S"

# The sequence of gigantic pages cleared back to back, when the host has
# that much memory to spare beside the bench's own buffer.
SEQUENCE_GB = 16
SEQUENCE_SPARE_GB = 2


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
               "native: struct page offsets from the kernel build", env=build.build_env())
    offsets = parse_offsets((kmod / "memlab_offsets.s").read_text())
    if "STRUCT_PAGE_SIZE" not in offsets:
        raise LabError(f"no offsets in {kmod / 'memlab_offsets.s'}")
    return offsets


def write_shim(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def compile_bench(offsets: dict[str, int]) -> Path:
    kinc = WORK / "kinc"
    write_shim(kinc, SHIM)
    asminc = WORK / "asminc"
    write_shim(asminc, ASM_SHIM)
    for rel, src in (("asm/stream_store.h", "arch/x86/include/asm/stream_store.h"),
                     ("asm-generic/stream_store.h", "include/asm-generic/stream_store.h")):
        (kinc / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.KERNEL_TREE / src, kinc / rel)
    header = WORK / "memlab_offsets.h"
    header.write_text("".join(f"#define {k} {v}\n" for k, v in sorted(offsets.items())))
    clear_obj = WORK / "clear_page_64.o"
    run_logged(["gcc", "-c", "-Wa,--noexecstack", "-I", str(asminc),
                str(paths.KERNEL_TREE / CLEAR_ASM),
                "-o", str(clear_obj)], paths.LOGS / "native.log",
               f"native: assemble the patch's {CLEAR_ASM}")
    binary = WORK / "memmap_bench"
    run_logged(["gcc", "-O2", "-pthread", "-DCONFIG_X86_64", "-include", str(header),
                "-I", str(kinc), str(NATIVE_SRC / "memmap_bench.c"), str(clear_obj),
                "-o", str(binary)],
               paths.LOGS / "native.log", "native: compile")
    return binary


# Rows measured against the best non-zero streaming fill ("limit") of the
# same buffer; zeroing has its own, faster mechanism and is shown in GB/s only.
RELATIVE_GROUPS = ("memmap", "limit")

# The clearing variants of the large-run groups ("clear 32M", "clear 32M
# + read run", ...), in the tables' words: the patch's own code, then the
# limit.
CLEAR_VARIANTS = {"stosb": "REP STOSB (cached)", "movnti": "MOVNTI",
                  "clzero": "CLZERO", "vector_nt": "vector streaming (yardstick)"}
CLEAR_BASELINE = "stosb"
CLEAR_STREAMING = ("movnti", "clzero")
CLEAR_LIMIT = "vector_nt"


def load(source: Path) -> tuple[dict, list[dict]]:
    """A native record and its summarized rows, or LabError."""
    try:
        data = json.loads(source.read_text())
        return data, summarize(data["records"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LabError(f"{source}: not a native result ({type(e).__name__}: {e})") from None


def host_record(slug: str) -> Path:
    """The record of the CPU @slug (hostinfo.cpu_slug()), or LabError."""
    source = HOSTS / f"{slug}.json"
    if not source.exists():
        known = ", ".join(p.stem for p in sorted(HOSTS.glob("*.json"))) or "none"
        raise LabError(f"no native record of CPU {slug!r} (recorded: {known})")
    return source


def speedup(rows: list[dict], group: str, faster: str, slower: str) -> float | None:
    """How many times as fast @faster ran as @slower in @group, one thread
    (medians); None if the run has either not."""
    by = {(r["group"], r["name"]): r for r in rows if r["threads"] == 1}
    a, b = by.get((group, faster)), by.get((group, slower))
    return b["median_s"] / a["median_s"] if a and b else None


# The onlining groups and their memory block sizes.
ONLINE_BLOCKS = {"online 128M": 128 << 20, "online 2G": 2 << 30}
# mm/mm_init.c's MEMMAP_PLAIN_MAX_BYTES: the largest memmap of a range read
# back as a whole that the kernel writes with plain stores.
MEMMAP_PLAIN_MAX_BYTES = 8 << 20


def kernel_online_choice(block_bytes: int, struct_page_size: int, checked: bool) -> str:
    """The store kind the patched kernel's memmap_sections_path() picks for
    a hot-added block left free: streamed at every size when nothing reads
    it back; where its tails are checked on their first free
    (check_fresh_pages), the size rule of ranges read back as a whole."""
    if checked and block_bytes // 4096 * struct_page_size <= MEMMAP_PLAIN_MAX_BYTES:
        return "plain"
    return "stream"


def online_policy(rows: list[dict], struct_page_size: int) -> list[dict]:
    """For each onlining group and state of the checks the record has: the
    one-pass variants' medians and ranges, the kernel's choice and how far
    it is from the faster one (one thread)."""
    by = {(r["group"], r["name"]): r for r in rows if r["threads"] == 1}
    out = []
    for group, block in ONLINE_BLOCKS.items():
        for checked in (False, True):
            suffix = "_checked" if checked else ""
            plain = by.get((group, f"one_pass_plain{suffix}"))
            stream = by.get((group, f"one_pass_stream{suffix}"))
            if not plain or not stream:
                continue
            medians = {"plain": plain["median_s"], "stream": stream["median_s"]}
            choice = kernel_online_choice(block, struct_page_size, checked)
            out.append({"group": group, "checked": checked, **medians, "choice": choice,
                        "over_best": medians[choice] / min(medians.values()) - 1,
                        "ranges": {"plain": (plain["min_s"], plain["max_s"]),
                                   "stream": (stream["min_s"], stream["max_s"])}})
    return out


def is_clear_run_group(group: str) -> bool:
    """One of the large-run clearing groups, whose rows are CLEAR_VARIANTS."""
    return group.startswith("clear ")


def summarize(records: list[dict]) -> list[dict]:
    """Median GB/s per kernel, and its share of the best streaming fill at
    that thread count (of the vector streaming clear in a clearing group),
    and for clearing groups its speed against REP STOSB."""
    rows = []
    for r in records:
        if "seconds" not in r:
            continue
        med = statistics.median(r["seconds"])
        rows.append({**r, "median_s": med, "gbps": r["bytes"] / med / 1e9,
                     "min_s": min(r["seconds"]), "max_s": max(r["seconds"])})
    by = {(x["group"], x["name"], x["threads"]): x for x in rows}
    for row in rows:
        row["pct_of_limit"] = row["vs_stosb"] = None
        if is_clear_run_group(row["group"]):
            limit = by.get((row["group"], CLEAR_LIMIT, row["threads"]))
            base = by.get((row["group"], CLEAR_BASELINE, row["threads"]))
            row["pct_of_limit"] = 100 * row["gbps"] / limit["gbps"] if limit else None
            row["vs_stosb"] = base["median_s"] / row["median_s"] if base else None
            continue
        limit_gbps = max((x["gbps"] for x in rows
                          if x["group"] == "limit" and x["threads"] == row["threads"]),
                         default=0)
        if limit_gbps and row["group"] in RELATIVE_GROUPS:
            row["pct_of_limit"] = 100 * row["gbps"] / limit_gbps
    return rows


def clearing_table(rows: list[dict], groups: list[str]) -> tuple[list[str], list[list[str]]]:
    """The variants measured in @groups (one thread), and a row per group:
    its name, GB/s of each variant, the best streaming variant against REP
    STOSB."""
    by = {(r["group"], r["name"]): r for r in rows if r["threads"] == 1}
    names = [n for n in CLEAR_VARIANTS if any((g, n) in by for g in groups)]
    out = []
    for g in groups:
        best = max((by[(g, n)]["vs_stosb"] for n in CLEAR_STREAMING if (g, n) in by),
                   default=None)
        out.append([g, *(f"{by[(g, n)]['gbps']:.1f}" if (g, n) in by else "n/a"
                         for n in names), f"{best:.2f}x" if best else ""])
    return names, out


def clearing_markdown(meta: dict, rows: list[dict]) -> str:
    """The large-run clearing groups of a run, for its own report."""
    groups = list(dict.fromkeys(r["group"] for r in rows if is_clear_run_group(r["group"])))
    if not groups:
        return ""
    names, table = clearing_table(rows, groups)
    lines = ["", f"#### Clearing large runs (one thread; limit: {meta['vector']} streaming "
             f"stores; CLZERO {'present' if meta['clzero'] else 'absent'})", "",
             "GB/s, median; each run cold; the buffer cleared in runs of the group's "
             "size, then what the group says is read.", "",
             "| group | " + " | ".join(CLEAR_VARIANTS[n] for n in names)
             + " | best streaming vs REP STOSB |",
             "|---|" + "---:|" * (len(names) + 1)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table]
    if not meta.get("sequence_gb"):
        lines += ["", f"The {SEQUENCE_GB}G sequence was not run: the host lacked "
                  f"{SEQUENCE_GB + SEQUENCE_SPARE_GB} GB of available memory."]
    return "\n".join(lines) + "\n"


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
        if is_clear_run_group(r["group"]):
            continue
        pct = f"{r['pct_of_limit']:.0f}%" if r["pct_of_limit"] is not None else ""
        alone = one_thread.get((r["group"], r["name"]))
        vs_one = f"{r['median_s'] / alone:.2f}" if alone and r["threads"] > 1 else ""
        lines.append(f"| {r['group']} | {r['name']} | {r['threads']} | {1000 * r['median_s']:.1f} | "
                     f"{1000 * r['min_s']:.1f}-{1000 * r['max_s']:.1f} | {r['gbps']:.2f} | {pct} "
                     f"| {vs_one} |")
    return "\n".join(lines) + "\n" + clearing_markdown(meta, rows)


def built_bench(config: str = "lab") -> tuple[Path, dict[str, int]]:
    """The benchmark binary of the patched kernel's tree, and the struct
    page offsets of @config's build it was compiled with: the measured lab
    kernel's, unless a plan that does not build it asks for another."""
    deps.ensure("build")
    if not kernel_tree.has_tree():
        kernel_tree.source()
    built = build.build("patched", config)
    WORK.mkdir(parents=True, exist_ok=True)
    offsets = generate_offsets(built.out)
    return compile_bench(offsets), offsets


def check(config: str) -> list[str]:
    """The patch's clearing variants run natively on a guarded run (CLZERO
    cannot run under TCG), built against @config's kernel: the variants
    checked, or LabError."""
    binary, _ = built_bench(config)
    res = run_quiet([str(binary), "check"], check=False)
    if res.returncode != 0:
        raise LabError(f"native clearing check failed ({res.returncode}): {res.stderr.strip()}")
    for line in res.stdout.splitlines():
        if line.startswith('{"checked"'):
            return list(json.loads(line)["checked"])
    raise LabError(f"native clearing check: no result in its output:\n{res.stdout}")


def run(device_gb: float = 100.0) -> int:
    binary, offsets = built_bench()
    memmap_gb = device_gb * offsets["STRUCT_PAGE_SIZE"] / 4096    # the bench's buffer
    sequence_gb = (SEQUENCE_GB if hostinfo.available_gb() >= SEQUENCE_GB + SEQUENCE_SPARE_GB
                   + max(memmap_gb, 1) else 0)
    say(f"native: running {binary.name} ({device_gb:.0f} GB device memmap"
        + (f", a {sequence_gb} GB clearing sequence)" if sequence_gb
           else f"; not the {SEQUENCE_GB} GB clearing sequence: too little memory)"))
    res = run_quiet([str(binary), str(device_gb), str(sequence_gb)], check=False)
    if res.returncode != 0:
        raise LabError(f"native benchmark failed ({res.returncode}):\n{res.stderr}")
    records = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    meta = next(r for r in records if "struct_page_size" in r)
    slug = hostinfo.cpu_slug()
    if slug == DOCUMENTED_CPU and not meta.get("clzero"):
        raise LabError(f"native: this {DOCUMENTED_CPU} ran without CLZERO (hidden by its "
                       "hypervisor?): the documents' record is written around CLZERO's "
                       "figures, so nothing was replaced")
    rows = summarize(records)
    cpu = hostinfo.cpu_detail()
    table = markdown(meta, rows, cpu)
    record = json.dumps(
        {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host_cpu": cpu,
         "provenance": provenance.now([(arches.GUEST_ARCH, "patched", "lab")]).to_json(),
         "offsets": offsets, "meta": meta, "records": records}, indent=1) + "\n"
    HOSTS.mkdir(parents=True, exist_ok=True)
    (HOSTS / f"{slug}.json").write_text(record)
    (HOSTS / f"{slug}.md").write_text(table)
    print(table)
    if slug == DOCUMENTED_CPU:
        report.write_plots(DOCUMENTED, paths.RESULTS)
    else:
        say(f"native: this CPU's record is {HOSTS.name}/{slug}.json; "
            f"the documents quote {DOCUMENTED_CPU}'s and list every CPU's ratios")
    return 0
