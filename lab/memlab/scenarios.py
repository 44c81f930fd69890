"""Guest scenarios as the test suite runs them: what to boot, what to assert.

Each scenario names its guest script (scenarios/NAME.sh), the machine it
needs, and a check that turns the parsed console (and the environment the
script ran with) into a list of problems. The bench runs the same scenarios,
resized, and applies the same checks to every run it measures.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from . import arches, guest, kconfig, paths, selftests, switches
from .console import Console
from .runner import LabError, say

PAGE_SIZE = 4096
STRUCT_PAGE_SIZE = 64       # x86-64's struct page: a block's memmap is 1/64 of it


def _int(value: str | None) -> int | None:
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def check_rebinds(con: Console, env: dict[str, str]) -> list[str]:
    """fsdax/devdax rebind protocol: one memmap init per bind, every one over
    the pfn device's data pages, and the data intact."""
    problems: list[str] = []
    rebinds = int(env["REBINDS"])
    binds = 1 + rebinds
    inits = con.memmap_inits
    if len(inits) != binds:
        problems.append(f"expected {binds} memmap_init_zone_device() calls "
                        f"(1 bind + {rebinds} rebinds), saw {len(inits)}")
    size = _int(con.result("pfn_size"))
    if size is None:
        problems.append("scenario did not report the pfn device size")
    else:
        expected = size // PAGE_SIZE
        wrong = [i.pages for i in inits if i.pages != expected]
        if wrong:
            problems.append(f"memmap init over {wrong} pages, expected {expected} "
                            f"(pfn device size {size} bytes / {PAGE_SIZE})")
    problems += checksum_kept(con, "checksum_before", "checksum_after", "pmem data")
    return problems


def checksum_kept(con: Console, before_key: str, after_key: str, what: str) -> list[str]:
    """A checksum the script reported before and after: present and equal."""
    before, after = con.result(before_key), con.result(after_key)
    if not before or before != after:
        return [f"{what} checksum before {before} != after {after}"]
    return []


def check_devdax(con: Console, env: dict[str, str]) -> list[str]:
    """devdax rebinds, then a mapping of the device held across fork."""
    problems = check_rebinds(con, env)
    if con.result("fork_checked") != "1":
        problems.append("the devdax mapping was not checked across fork")
    return problems


def check_dax_fs(con: Console, env: dict[str, str]) -> list[str]:
    """ext4 -o dax on fsdax: the rebind protocol, and in every round (the
    first mount, then each remount after a rebind) every file page mapped
    from the namespace, pinned by direct I/O and shared across fork."""
    problems = check_rebinds(con, env)
    rounds = 1 + int(env["REBINDS"])
    file_pages = int(env["FILES"]) * int(env["FILE_MIB"]) * (1 << 20) // PAGE_SIZE
    for key, expected, what in (
            ("files_used", [str(r) for r in range(rounds)], "rounds of file use"),
            ("dax_placed_pages", [str(file_pages)] * rounds, "pages mapped from the namespace"),
            ("pinned_files", [env["FILES"]] * rounds, "files pinned by direct I/O"),
            ("fork_checked", ["1"] * rounds, "fork checks")):
        seen = con.result_values(key)
        if seen != expected:
            problems.append(f"{what}: expected {expected}, saw {seen}")
    # Each round's transfers pin every file page twice (out of and into it);
    # /proc/vmstat lags by what the CPUs have not folded in yet, so at
    # least once is asked: without pinning the count stays near zero.
    pinned = [_int(v) or 0 for v in con.result_values("pinned_pages")]
    if len(pinned) != rounds or min(pinned, default=0) < file_pages:
        problems.append(f"pages pinned per round {pinned}, expected at least "
                        f"{file_pages} in each of {rounds} rounds")
    return problems


def check_rebind_stress(con: Console, env: dict[str, str]) -> list[str]:
    """One region reconfigured CYCLES times: two memmap inits per cycle (the
    new layout's bind, then a rebind), each over that layout's pfn device,
    and each cycle's fresh data read back intact before and after."""
    problems: list[str] = []
    cycles = int(env["CYCLES"])
    reports = [r for r in con.results if "cycle" in r]
    if len(reports) != cycles:
        problems.append(f"expected {cycles} cycles, saw {len(reports)}")
    inits = con.memmap_inits
    if len(inits) != 2 * len(reports):
        return problems + [f"expected {2 * len(reports)} memmap_init_zone_device() calls "
                           f"(a bind and a rebind in each of {len(reports)} cycles), "
                           f"saw {len(inits)}"]
    for r, bind, rebind in zip(reports, inits[::2], inits[1::2]):
        pages = (_int(r.get("pfn_size")) or 0) // PAGE_SIZE
        if not bind.pages == rebind.pages == pages:
            problems.append(f"cycle {r['cycle']} ({r.get('layout')}): memmap inits over "
                            f"{bind.pages} and {rebind.pages} pages, expected {pages}")
        sums = {r.get(k) for k in ("checksum_written", "checksum_read", "checksum_rebound")}
        if len(sums) != 1 or None in sums:
            problems.append(f"cycle {r['cycle']} ({r.get('layout')}): data written "
                            f"{r.get('checksum_written')}, read {r.get('checksum_read')}, "
                            f"after the rebind {r.get('checksum_rebound')}")
    return problems


def check_hmm_tests(con: Console, env: dict[str, str]) -> list[str]:
    """hmm-tests: every case passed, none skipped or failed, after test_hmm
    memremapped a chunk for each of its four devices."""
    problems: list[str] = []
    counts = {k: _int(con.result(f"hmm_{k}"))
              for k in ("pass", "fail", "xfail", "xpass", "skip", "error")}
    if counts["pass"] is None:
        problems.append("hmm-tests printed no totals")
    elif not counts["pass"] or any(counts[k] for k in counts if k != "pass"):
        problems.append("hmm-tests: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
    if con.result("hmm_exit") != "0":
        problems.append(f"hmm-tests exited {con.result('hmm_exit')}")
    not_passed = con.result_values("hmm_not_passed")
    if not_passed:
        problems.append(f"{len(not_passed)} cases not passed: "
                        + ", ".join(not_passed[:5]) + (" ..." if len(not_passed) > 5 else ""))
    chunk_pages = HMM_CHUNK_BYTES // PAGE_SIZE
    inits = con.memmap_inits
    if len(inits) < 4 or any(i.pages != chunk_pages for i in inits):
        problems.append(f"memmap inits over {[i.pages for i in inits]} pages, expected "
                        f"at least 4 of {chunk_pages} (a chunk per device)")
    return problems


def check_two_devices(con: Console, rounds: int, threads: int,
                      cpus_note: str = "") -> list[str]:
    """Two fsdax devices (pmem0, pmem1), each bound once and rebound @rounds
    times: one memmap init per bind over its pfn device's pages, each range
    shared among @threads threads, and both devices' data intact."""
    problems: list[str] = []
    binds = 2 * (1 + rounds)
    sizes = [_int(con.result(f"pfn_size{r}")) for r in (0, 1)]
    if None in sizes:
        return problems + ["scenario did not report both pfn device sizes"]
    expected_pages = {size // PAGE_SIZE for size in sizes if size}
    inits = con.memmap_inits
    if len(inits) != binds:
        problems.append(f"expected {binds} memmap_init_zone_device() calls "
                        f"(2 devices x (1 bind + {rounds} rebinds)), saw {len(inits)}")
    wrong = [i.pages for i in inits if i.pages not in expected_pages]
    if wrong:
        problems.append(f"memmap init over {wrong} pages, expected {sorted(expected_pages)}")
    shares = con.memmap_shares
    if len(shares) != binds:
        problems.append(f"expected {binds} lines of threads per range, saw {len(shares)}")
    unshared = [s.threads for s in shares if s.threads != threads]
    if unshared:
        problems.append(f"ranges shared among {unshared} threads, expected {threads}"
                        + (f" ({cpus_note})" if cpus_note else ""))
    for r in (0, 1):
        problems += checksum_kept(con, f"checksum_before{r}", f"checksum_after{r}",
                                  f"pmem{r} data")
    return problems


def check_pair(con: Console, env: dict[str, str]) -> list[str]:
    """Two fsdax devices bound at once, ROUNDS times: check_two_devices(),
    each range shared among all the guest's CPUs (up to the kernel's cap, as
    the guest read it), and the two inits of a round running at once."""
    cpus = _int(con.result("cpus")) or 0
    cap = _int(con.result("thread_cap")) or 0       # 0: no cap, one per CPU
    threads = max(1, min(cpus, cap) if cap else cpus)
    problems = check_two_devices(con, int(env["ROUNDS"]), threads, f"{cpus} CPUs")
    # Each round's two binds start together; their memmap inits must meet
    # at least once, or the scenario proved nothing about running at once.
    inits = con.memmap_inits
    pairs = list(zip(inits[2::2], inits[3::2]))
    if pairs and not any(a.overlaps(b) for a, b in pairs):
        problems.append(f"the two devices' memmap inits never ran at the same time "
                        f"in {len(pairs)} rounds")
    return problems


def check_kmem_online(con: Console, env: dict[str, str]) -> list[str]:
    """dax kmem: every block of the region onlined (1 + CYCLES) times, each
    online over a whole block with its memmap init timed (with
    MEMMAP_ON_MEMORY, over the block but its memmap, which is initialized
    first on its own); the memory used after each online (files read back
    intact, taken from ZONE_MOVABLE; with HVO=1, hugetlb folios too) and
    offlined."""
    problems: list[str] = []
    cycles = int(env["CYCLES"])
    blocks, block_bytes = _int(con.result("blocks")), _int(con.result("block_bytes"))
    if not blocks or not block_bytes:
        return problems + ["scenario did not report the hot-added memory blocks"]
    memmap_on_memory = env.get("MEMMAP_ON_MEMORY", "0")
    if con.result("memmap_on_memory") != memmap_on_memory:
        problems.append(f"dax0.0 has memmap_on_memory={con.result('memmap_on_memory')}, "
                        f"asked for {memmap_on_memory}")
    block_pages = block_bytes // PAGE_SIZE
    vmemmap_pages = block_pages * STRUCT_PAGE_SIZE // PAGE_SIZE if memmap_on_memory == "1" else 0
    onlines = blocks * (1 + cycles)
    # The memmap inits of one online, in order: its vmemmap's, then the rest.
    init_pages = [p for p in (vmemmap_pages, block_pages - vmemmap_pages) if p]
    for what, calls, per_online in (
            ("online_pages()", con.onlines, [block_pages - vmemmap_pages]),
            ("hot-added memmap init", con.hotplug_inits, init_pages)):
        want = per_online * onlines
        if len(calls) != len(want):
            each = f" x {len(per_online)}" if len(per_online) > 1 else ""
            problems.append(f"expected {len(want)} {what} calls ({blocks} blocks x "
                            f"(1 + {cycles} cycles){each}), saw {len(calls)}")
        elif [c.pages for c in calls] != want:
            problems.append(f"{what} over {sorted({c.pages for c in calls})} pages, expected "
                            f"{per_online} per online (block of {block_bytes} bytes, "
                            f"{vmemmap_pages} pages of its memmap on it)")
    return (problems + movable_used(con, 1 + cycles)
            + hvo_spared_self_hosted(con, env, blocks * block_bytes))


def hvo_spared_self_hosted(con: Console, env: dict[str, str], added_bytes: int) -> list[str]:
    """With HVO=1 (kmem-online.sh's hugetlb step): with HVO on, 2 MB hugetlb
    folios, half of the @added_bytes of blocks that carry their own memmap,
    allocated from ZONE_MOVABLE, left the kernel's count of memmap pages
    alone. HVO frees the memmap of other folios; the self-hosted mark on a
    block's memmap pages, set before the block goes online, must still be
    there to stop it."""
    if env.get("HVO") != "1":
        return []
    folios, taken, delta = (_int(con.result(key)) for key in
                            ("hvo_folios", "hvo_movable_taken", "hvo_memmap_delta"))
    if folios is None or taken is None or delta is None:
        return ["scenario did not report its hugetlb folios on the self-hosted memmap (HVO)"]
    problems = []
    folio_bytes = 2 << 20
    if folios != added_bytes // 2 // folio_bytes:
        problems.append(f"{folios} hugetlb folios allocated, expected "
                        f"{added_bytes // 2 // folio_bytes} (half of the onlined memory)")
    if not folios or taken < folios * folio_bytes // PAGE_SIZE:
        problems.append(f"the {folios} hugetlb folios took {taken} pages of ZONE_MOVABLE: "
                        "not all on the onlined blocks")
    if delta:
        problems.append(f"HVO changed the count of memmap pages by {delta} for the hugetlb "
                        "folios on blocks that carry their own memmap: their memmap pages "
                        "lost the self-hosted mark (or folios landed off the blocks)")
    return problems


def fill_read_back(con: Console) -> list[str]:
    """lib.sh's fill: every file read back as written."""
    if con.result("bad_files") != "0":
        return [f"{con.result('bad_files')} files read back other data than written"]
    return []


def movable_used(con: Console, fills: int) -> list[str]:
    """lib.sh's fill_movable, run @fills times: each time every file read
    back as written, and at least half of the files' pages taken from
    ZONE_MOVABLE (the memory just onlined)."""
    reports = list(zip(con.result_values("fill_mib"), con.result_values("bad_files"),
                       con.result_values("movable_free_before"),
                       con.result_values("movable_free_filled")))
    if len(reports) != fills:
        return [f"expected {fills} fills of the onlined memory, saw {len(reports)}"]
    problems = []
    for n, (fill_mib, bad, before, filled) in enumerate(reports, 1):
        if bad != "0":
            problems.append(f"fill {n}: {bad} files read back other data than written")
        fill_pages = int(fill_mib) * (1 << 20) // PAGE_SIZE
        if not fill_pages or int(before) - int(filled) < fill_pages // 2:
            problems.append(f"fill {n}: the files ({fill_pages} pages) took "
                            f"{int(before) - int(filled)} pages of ZONE_MOVABLE: the "
                            "onlined memory was not used")
    return problems


def check_memory_used(con: Console, env: dict[str, str]) -> list[str]:
    """With FILL_PCT, the script filled at least that share of the memory
    available after boot, the kernel's available memory went down by at
    least half of it (tmpfs pages cannot be reclaimed without swap), and
    all of it read back as written."""
    pct = int(env.get("FILL_PCT", "0"))
    if not pct:
        return []
    available_kb, fill_mib = _int(con.result("available_kb")), _int(con.result("fill_mib"))
    filled_kb = _int(con.result("available_filled_kb"))
    if available_kb is None or fill_mib is None or filled_kb is None:
        return ["the script did not report the memory it filled"]
    problems = []
    want_mib = available_kb * pct // 100 // 1024
    if fill_mib < want_mib or fill_mib <= 0:
        problems.append(f"filled {fill_mib} MiB of the {available_kb // 1024} MiB available, "
                        f"asked for {pct}%")
    if available_kb - filled_kb < fill_mib * 1024 // 2:
        problems.append(f"the files ({fill_mib} MiB) took {(available_kb - filled_kb) // 1024} "
                        "MiB of the available memory: the memory was not used")
    return problems + fill_read_back(con)


def check_boot_memmap(con: Console, env: dict[str, str]) -> list[str]:
    """Boot: memmap_init() timed once, over at least every page the kernel
    then manages (MemTotal leaves out what boot reserved: under KASAN its
    shadow, an eighth of memory, so at least three quarters remain), and
    memblock_free_all() timed once, freeing some of those pages; then the
    memory used, when the scenario asks for it."""
    problems = check_memory_used(con, env)
    if len(con.boot_inits) != 1 or len(con.boot_frees) != 1:
        return problems + [f"expected 1 timed boot memmap_init() and 1 memblock_free_all(), "
                           f"saw {len(con.boot_inits)} and {len(con.boot_frees)}"]
    if not 0 < con.boot_frees[0].pages <= con.boot_inits[0].pages:
        problems.append(f"memblock_free_all() freed {con.boot_frees[0].pages} pages of the "
                        f"{con.boot_inits[0].pages} that memmap_init() initialized")
    boot_kb = con.boot_inits[0].pages * PAGE_SIZE // 1024
    total_kb = _int(con.result("mem_total_kb")) or 0
    if not total_kb <= boot_kb or total_kb < boot_kb * 3 // 4:
        problems.append(f"memmap_init() covered {boot_kb} kB of boot memory, "
                        f"the kernel manages {total_kb} kB")
    return problems


def check_boot_deferred(con: Console, env: dict[str, str]) -> list[str]:
    """Boot with deferred struct page init: boot's checks, and a deferred
    init thread's line from at least one node with memory and at most one
    per node (a node whose highest zone fits in one section defers nothing
    and prints none), each having initialized and freed pages, together no
    more than memmap_init() covered. (memblock_free_all() counts the
    deferred pages it leaves to the threads as freed.)"""
    problems = check_boot_memmap(con, env)
    nodes = _int(con.result("memory_nodes")) or 0
    deferred = con.deferred_inits
    if not 0 < len(deferred) <= nodes:
        return problems + [f"expected a deferred init line from each of up to {nodes} nodes "
                           f"with memory, saw {len(deferred)}"]
    if any(d.pages <= 0 for d in deferred):
        problems.append(f"deferred init threads freed {[d.pages for d in deferred]} pages: "
                        "nothing was deferred")
    freed = sum(d.pages for d in deferred)
    if con.boot_inits and freed > con.boot_inits[0].pages:
        problems.append(f"the deferred init threads freed {freed} pages, memmap_init() "
                        f"covered {con.boot_inits[0].pages}")
    return problems


# The NUMA guest: nodes 0 and 1 with two CPUs each, node 2 memory only;
# QEMU lays the nodes out in order, so the two pmem regions (the first at
# 4 GB, the second past a gap) fall on node 1 and on node 2.
NUMA_NODE_CPUS = 2
NUMA_NODES = (guest.NumaNode(2, f"0-{NUMA_NODE_CPUS - 1}"),
              guest.NumaNode(2, f"{NUMA_NODE_CPUS}-{2 * NUMA_NODE_CPUS - 1}"),
              guest.NumaNode(2))
NUMA_REGION_NODES = (1, 2)
NUMA_CPULESS_NODE = 2


def check_numa(con: Console, env: dict[str, str]) -> list[str]:
    """The NUMA guest: the layout as asked for (the regions on their nodes,
    the memory-only node without CPUs); a deferred init line from every
    node, each having freed pages; one memmap init per bind of each
    region, shared among the two CPUs of the binding CPU's node (for the
    region on the memory-only node too); both regions' data intact."""
    problems: list[str] = []
    nodes = _int(con.result("nodes")) or 0
    if nodes != len(NUMA_NODES):
        return [f"expected {len(NUMA_NODES)} NUMA nodes, the guest has {nodes}"]
    if con.result(f"node{NUMA_CPULESS_NODE}_cpus"):
        problems.append(f"node {NUMA_CPULESS_NODE} has CPUs "
                        f"{con.result(f'node{NUMA_CPULESS_NODE}_cpus')}")
    for r, node in enumerate(NUMA_REGION_NODES):
        got = con.result(f"region{r}_node")
        if got != str(node):
            problems.append(f"pmem region {r} is on node {got}, expected {node}")
    deferred = sorted(d.node for d in con.deferred_inits if d.node is not None)
    if deferred != list(range(nodes)):
        problems.append(f"deferred init lines from nodes {deferred}, expected one from "
                        f"each of {list(range(nodes))}")
    if any(d.pages <= 0 for d in con.deferred_inits):
        problems.append(f"deferred init threads freed {[d.pages for d in con.deferred_inits]} "
                        "pages")
    cap = _int(con.result("thread_cap")) or 0       # 0: no cap
    threads = min(NUMA_NODE_CPUS, cap) if cap else NUMA_NODE_CPUS
    return problems + check_two_devices(con, int(env["ROUNDS"]), threads)


def check_device_private(con: Console, env: dict[str, str]) -> list[str]:
    """test_hmm: every load memremaps one CHUNK_MB DEVICE_PRIVATE chunk per
    device."""
    problems: list[str] = []
    loads = int(env["LOADS"])
    chunk = _int(con.result("chunk_bytes"))
    devices = _int(con.result("devices")) or 0
    inits = con.memmap_inits
    if len(inits) != loads * devices:
        problems.append(f"expected {loads * devices} memmap_init_zone_device() calls "
                        f"({loads} loads x {devices} devices), saw {len(inits)}")
    if chunk is None or chunk != int(env["CHUNK_MB"]) << 20:
        problems.append(f"scenario reported chunk size {chunk}, asked for "
                        f"{env['CHUNK_MB']} MB")
    else:
        wrong = [i.pages for i in inits if i.pages != chunk // PAGE_SIZE]
        if wrong:
            problems.append(f"memmap init over {wrong} pages, expected {chunk // PAGE_SIZE}")
    return problems


def check_zeroing(con: Console, env: dict[str, str]) -> list[str]:
    """init_on_alloc hugetlb + THP: everything handed out reads zero."""
    problems: list[str] = []
    allocs, timed = int(env.get("ALLOCS", "1")), len(con.result_values("hugetlb_alloc_ns"))
    if timed != allocs:
        problems.append(f"expected {allocs} timed allocations, saw {timed}")
    if not con.result("hugepages") or \
            con.result("hugepages") != con.result("hugepages_requested"):
        problems.append(f"got {con.result('hugepages')} of "
                        f"{con.result('hugepages_requested')} hugetlb pages")
    if con.result("file_first_nonzero") != "-1":
        problems.append(f"hugetlb memory not zero at byte {con.result('file_first_nonzero')}")
    if con.result("thp_first_nonzero") != "-1":
        problems.append(f"THP memory not zero at byte {con.result('thp_first_nonzero')}")
    if not (_int(con.result("thp_bytes")) or 0) > 0:
        problems.append("no THP was used")
    return problems


# HVO keeps the first page of a hugetlb folio's vmemmap
# (HUGETLB_VMEMMAP_RESERVE_SIZE) and frees the rest: 4095 of a 1 GB folio's.
GIGANTIC_BYTES = 1 << 30
GIGANTIC_HVO_PAGES = GIGANTIC_BYTES // PAGE_SIZE * STRUCT_PAGE_SIZE // PAGE_SIZE - 1


def check_gigantic(con: Console, env: dict[str, str]) -> list[str]:
    """A 1 GB hugetlb page, the one reserved at boot and then RUNTIME_ALLOCS
    allocated at run time, zeroed at each fault or fallocate(): reads zero;
    with INIT_ON_ALLOC=1, init_on_alloc on; with HVO=1, the vmemmap of each
    page allocated at run time freed, and restored when a page goes back to
    the buddy allocator, the boot page last (the kernel's count of memmap
    pages); without HVO, that count left alone."""
    problems: list[str] = []
    rounds, allocs = int(env.get("ROUNDS", "4")), int(env.get("RUNTIME_ALLOCS", "0"))
    hvo = env.get("HVO") == "1"
    if hvo and con.result("hvo") != "1":
        problems.append(f"HVO asked for, hugetlb_optimize_vmemmap is {con.result('hvo')}")
    if env.get("INIT_ON_ALLOC") == "1" and con.result("heap_alloc_init") != "on":
        problems.append(f"init_on_alloc asked for, the kernel's heap alloc init is "
                        f"{con.result('heap_alloc_init')!r}")
    if con.result("gigantic_pages") != "1":
        problems.append(f"{con.result('gigantic_pages')} gigantic pages reserved, not 1")
    if con.result("runtime_allocs") != str(allocs):
        problems.append(f"{con.result('runtime_allocs')} of {allocs} pages allocated at "
                        "run time")
    zeroed = con.result_values("gigantic_first_nonzero")
    if len(zeroed) != rounds + allocs:
        problems.append(f"expected {rounds} rounds and {allocs} pages allocated at run "
                        f"time, saw {len(zeroed)} pages zeroed")
    problems += [f"round {i}: gigantic page not zero at byte {bad}"
                 for i, bad in enumerate(zeroed) if bad != "-1"]
    freed = GIGANTIC_HVO_PAGES if hvo else 0
    deltas = zip(con.result_values("runtime_alloc_memmap_delta"),
                 con.result_values("runtime_free_memmap_delta"))
    for i, (alloc, free) in enumerate(deltas):
        if (int(alloc), int(free)) != (-freed, freed):
            problems.append(f"run-time page {i}: the count of memmap pages moved by {alloc} "
                            f"when it was allocated and by {free} when it was freed, "
                            f"expected {-freed} and {freed}")
    boot_free = con.result("boot_page_free_memmap_delta")
    if allocs and boot_free != str(freed):
        problems.append(f"freeing the boot page moved the count of memmap pages by "
                        f"{boot_free}, expected {freed}")
    return problems


def check_virtio_mem(con: Console, env: dict[str, str]) -> list[str]:
    """virtio-mem: each of CYCLES plugs brought PLUG_MIB of memory blocks,
    each block onlined once per plug over all its pages with its memmap
    init timed; the memory then used (files read back intact, taken from
    ZONE_MOVABLE) and every block unplugged again."""
    problems: list[str] = []
    cycles = int(env["CYCLES"])
    block_bytes = _int(con.result("block_bytes"))
    if not block_bytes:
        return ["scenario did not report the memory block size"]
    blocks = (int(env["PLUG_MIB"]) << 20) // block_bytes
    block_pages = block_bytes // PAGE_SIZE
    plugged = con.result_values("plugged_blocks")
    if len(plugged) != cycles or any(p != str(blocks) for p in plugged):
        problems.append(f"expected {cycles} plugs of {blocks} blocks, saw {plugged}")
    left = con.result_values("blocks_left")
    if len(left) != cycles or any(n != "0" for n in left):
        problems.append(f"blocks left online after each unplug: {left}, expected {cycles} x 0")
    for what, calls in (("online_pages()", con.onlines),
                        ("hot-added memmap init", con.hotplug_inits)):
        if [c.pages for c in calls] != [block_pages] * blocks * cycles:
            problems.append(f"expected {blocks * cycles} {what} calls over {block_pages} pages "
                            f"({blocks} blocks x {cycles} plugs), saw "
                            f"{len(calls)} over {sorted({c.pages for c in calls})}")
    return problems + movable_used(con, cycles)


def check_fault_inject(con: Console, env: dict[str, str]) -> list[str]:
    """Faults injected: every bind that met a fault either bound with the
    data intact or left the device unbound; a bind whose chunks' allocation
    alone failed bound with the data intact; every online refused by the
    memory notifier, the next ones working and the memory used; the binds
    with CPU 1 going offline done, one at least while their memmap init ran
    on it; no leak."""
    problems: list[str] = []
    faults = _int(con.result("faults")) or 0
    ok = _int(con.result("fault_binds_ok")) or 0
    failed = _int(con.result("fault_binds_failed")) or 0
    if faults <= 0 or ok + failed != faults:
        problems.append(f"{faults} faults injected into binds, {ok} bound and {failed} failed")
    if con.result("fault_binds_bad") != "0":
        problems.append(f"{con.result('fault_binds_bad')} binds after a fault lost the data")
    if con.result("chunk_faults_left") != "0":
        problems.append("the chunks' allocation was not failed "
                        f"(failslab times left: {con.result('chunk_faults_left')})")
    blocks = con.result("blocks")
    if not blocks or con.result("onlines_refused") != blocks:
        problems.append(f"{con.result('onlines_refused')} of {blocks} onlines refused "
                        "by the memory notifier")
    problems += fill_read_back(con)
    rounds = con.result_values("cpu_offline_round")
    if len(rounds) < int(env["CPU_ROUNDS"]):
        problems.append(f"{len(rounds)} binds with a CPU going offline, "
                        f"expected at least {env['CPU_ROUNDS']}")
    problems += cpu_went_offline_mid_init(con, 1)
    if con.result("kmemleak_reports") != "0":
        problems.append(f"kmemleak reports {con.result('kmemleak_reports')} objects")
    return problems


def cpu_went_offline_mid_init(con: Console, cpu: int) -> list[str]:
    """@cpu was going offline, at least once, while a memmap_init_zone_device()
    shared with it (more than one thread) ran."""
    offlines = [(start, end) for c, start, end in con.cpu_offlines if c == cpu]
    shared = [init for init, share in zip(con.memmap_inits, con.memmap_shares)
              if share.threads > 1]
    if any(start <= init.end_s and init.start_s <= end
           for init in shared for start, end in offlines):
        return []
    return [f"CPU {cpu} was never going offline during a memmap init it shared "
            f"({len(offlines)} offlines, {len(shared)} shared inits)"]


def check_fast_paths(con: Console, env: dict[str, str]) -> list[str]:
    """The kernel's reports of each memmap init's path and state and of
    its large clear, as the switch SWITCH off (none: "") wants them
    (switches.check()); the onlined memory used."""
    return (switches.check(con, env["SWITCH"], int(env["CPUS"]), FAST_PATHS_CLEAR)
            + movable_used(con, 1))


def check_selftests(con: Console, env: dict[str, str]) -> list[str]:
    """The kernel's selftests: every test reported (selftests.check_run())."""
    return selftests.check_run(con)


def compare_selftests(config: str, base: Console, patched: Console) -> list[str]:
    """No selftest that passes on the base kernel and not on the patched
    one (other differences, and tests that passed only when run again, are
    shown, not failed); both kernels' outcomes recorded in results/."""
    say(f"selftests of both kernels recorded in {selftests.record(config, base, patched)}")
    regressions, others = selftests.compare(selftests.outcomes(base),
                                            selftests.outcomes(patched))
    if others:
        say("selftests ending otherwise, not on the patched kernel's account: "
            + "; ".join(others))
    for kernel, con in (("base", base), ("patched", patched)):
        if run_again := selftests.run_again(con):
            outcome = selftests.outcomes(con)
            say(f"selftests that failed on {kernel} and were run again: "
                + "; ".join(f"{name} ended {outcome[name]} on run {runs}"
                            for name, runs in run_again.items()))
    return regressions


@dataclass(frozen=True)
class Reference:
    """A reference posting's measurement (real hardware) of what a bench
    row measures, to print beside ours."""
    what: str
    base: float
    patched: float
    unit: str

    @property
    def ratio(self) -> float:
        return self.patched / self.base

    def __str__(self) -> str:
        return f"{self.what}: {self.base:g} -> {self.patched:g} {self.unit} ({self.ratio:.3f})"


@dataclass(frozen=True)
class BenchSizes:
    """The bench's machine sizes and repetitions, from the host's free
    memory: what every bench row resizes its scenario to."""
    quick: bool
    pmem_gb: int           # the rebind scenarios' namespace
    rebinds: int
    hugepages: int         # 2 MB hugetlb pages allocated per sample
    chunk_gb: int          # test_hmm's DEVICE_PRIVATE chunk per device
    kmem_gb: int           # dax kmem region
    boot_gb: int           # the boot scenario's guest RAM

    @staticmethod
    def for_host(quick: bool, host_gb: float, pmem_gb: int | None = None) -> "BenchSizes":
        avail = int(host_gb)
        return BenchSizes(
            quick=quick,
            # Largest pmem region that fits beside 4 GB of guest RAM, up to 16 GB.
            pmem_gb=pmem_gb or (4 if quick else max(4, min(16, avail - 6))),
            rebinds=5 if quick else 30,
            hugepages=128 if quick else min(8192, max(512, (avail - 6) * 512)),
            # A 64 GB chunk (the postings' size) has a 1 GB memmap in guest RAM.
            chunk_gb=1 if quick else (64 if avail >= 12 else 16),
            # Every 128 MB block onlined 1 + cycles times, a sample each.
            kmem_gb=1 if quick else max(1, min(8, avail - 6)),
            # Boot: as much RAM as the host can give a guest.
            boot_gb=3 if quick else max(4, avail - 4))


@dataclass(frozen=True)
class BenchRow:
    """A scenario as `memlab bench` measures it: resized, and what one
    sample is. The bench applies the scenario's checks to every run."""
    name: str                                          # the row in results/
    metric: Callable[[BenchSizes], str]                # what one sample is
    resize: Callable[["Scenario", BenchSizes], "Scenario"]
    reference: Reference | str                         # a posting's numbers, or why none
    # Where a sample comes from: each `MEMLAB KEY=<ns>` result a script
    # printed, or (None) each line of a lab patch's timed calls, parsed into
    # this Console list (memmap_inits: memmap_init_zone_device()).
    result_ns: str | None = None
    calls: str = "memmap_inits"
    # Rebind protocols: the first memmap init (the bind) is reported apart.
    first_bind_apart: bool = False
    # Timed work the series spreads over the CPUs: with more than one vCPU
    # the patched kernel is also measured on one thread.
    parallel: bool = False
    # Left out of `bench --quick`.
    full_only: bool = False
    # A short name for narrow tables (the cover letter's); the row's name if "".
    label: str = ""
    # The config of the base and patched kernels the row boots.
    config: str = "lab"


@dataclass
class Scenario:
    name: str
    script: str
    description: str
    memory_gb: int = 2
    pmem_gb: int = 0
    pmem_regions: int = 1
    env: dict[str, str] = field(default_factory=dict)
    append: list[str] = field(default_factory=list)   # kernel command line
    # The scenario's own verdict on a run (beyond done=1, which every
    # scenario script reports last).
    check: Callable[[Console, dict[str, str]], list[str]] = lambda con, env: []
    # A runner self-test: the run must fail with this kind of console report.
    expect_failure: str | None = None
    # Configs the test suite runs it on (on their patched kernels).
    configs: tuple[str, ...] = ("lab",)
    # Also run on the lab config's base kernel: what the scenario does must
    # work before the series as after it.
    on_base: bool = False
    # What `memlab bench` measures on it, resized.
    bench: tuple[BenchRow, ...] = ()
    # QEMU's CPU model, when the scenario needs another than virtme-ng's.
    cpu: str = ""
    cpus: int = 2
    numa: tuple[guest.NumaNode, ...] = ()
    virtio_mem_gb: int = 0
    # It onlines hot-added memory to the buddy allocator (dax kmem,
    # virtio-mem): see TAG_CHECKING_CONFIGS.
    hot_adds: bool = False
    timeout: int = guest.GuestSpec.timeout
    # Both kernels' runs (config, base, patched) weighed together, for a
    # scenario on_base: problems.
    compare: Callable[[str, Console, Console], list[str]] | None = None

    def spec(self, variant: str, config: str = "lab", accel: str = "tcg") -> guest.GuestSpec:
        return guest.GuestSpec(variant=variant, config=config, script=self.script,
                               memory_gb=self.memory_gb, pmem_gb=self.pmem_gb,
                               pmem_regions=self.pmem_regions,
                               accel=accel, env=resolve_env(self.env, variant, config),
                               append=self.command_line(config), cpu=self.cpu, cpus=self.cpus,
                               numa=self.numa, virtio_mem_gb=self.virtio_mem_gb,
                               timeout=self.timeout)

    def command_line(self, config: str) -> list[str]:
        """What the guest's kernel command line adds on @config."""
        if self.hot_adds and config in TAG_CHECKING_CONFIGS:
            return [*self.append, PROFILING_OFF]
        return list(self.append)

    def problems(self, con: Console) -> list[str]:
        done = [] if con.result("done") == "1" else ["scenario did not report done=1"]
        return done + self.check(con, self.env)

    def verdict(self, result: guest.GuestResult) -> list[str]:
        """Problems with a run of this scenario (empty: passed): the
        console's reports and the script's exit, then its own checks; for a
        runner self-test, whether the expected report came."""
        if self.expect_failure:
            kinds = [f.kind for f in result.console.failures]
            if self.expect_failure not in kinds:
                return [f"expected a {self.expect_failure} report on the console, "
                        f"saw {kinds or 'none'}"]
            return []
        return result.problems() + self.problems(result.console)

    def sized(self, memory_gb: int, pmem_gb: int = 0, **env: str) -> "Scenario":
        """The same scenario on another machine size and parameters."""
        return replace(self, memory_gb=memory_gb, pmem_gb=pmem_gb,
                       env={**self.env, **env})


def resolve_env(env: dict[str, str], variant: str, config: str = "lab") -> dict[str, str]:
    """A guest script's environment with "@out/PATH" values turned into paths
    inside the variant's build directory (e.g. a module it loads)."""
    return {key: str(paths.out_dir(arches.GUEST_ARCH, variant, config) / value[5:])
            if value.startswith("@out/") else value
            for key, value in env.items()}


REBINDS = 3
CPU_OFFLINE_ROUNDS = 8
LOADS = 3
# Every x86-64 config the test suite boots: the measured lab kernel, the
# lab kernel with deferred struct page init (defer), and with `memlab test
# --full` vm (defer with DEBUG_VM, fast paths on), debug (KASAN) and
# debian (Debian's own config).
ALL_CONFIGS = arches.guest().test_configs
DEFER_CONFIG = "defer"
# Those whose boot leaves most of memory to the deferred init threads.
DEFERRING_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_DEFERRED_STRUCT_PAGE_INIT")
# Those with NUMA (Debian's).
NUMA_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_NUMA")
# Those with DEBUG_VM (vm, debug).
DEBUG_VM_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_DEBUG_VM")
# Those that build HVO (the vmemmap of hugetlb pages freed), as Debian's do,
# for the gigantic page reserved at boot: not under DEBUG_VM, where
# 6.12.117's HVO warns about that page on base and patched alike
# (docs/testing.md says why).
HVO_CONFIGS = tuple(c for c in kconfig.configs_with(ALL_CONFIGS,
                                                    "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP")
                    if c not in DEBUG_VM_CONFIGS)
# Those that check every page's allocation tag (MEM_ALLOC_PROFILING_DEBUG):
# 6.12.117 warns as onlining frees the first hot-added page, on base and
# patched alike (docs/testing.md), so a scenario that hot-adds memory boots
# them with the profiling off.
TAG_CHECKING_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_MEM_ALLOC_PROFILING_DEBUG")
PROFILING_OFF = "sysctl.vm.mem_profiling=0"
# Those with DEVICE_PRIVATE (test_hmm), which Debian's kernels do not build.
HMM_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_DEVICE_PRIVATE")
VIRTIO_MEM_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_VIRTIO_MEM")
FAULT_CONFIGS = kconfig.configs_with(ALL_CONFIGS, "CONFIG_FAULT_INJECTION")
DAX_FS_REBINDS = 2
STRESS_CYCLES = 10     # each of the 5 layouts twice
# test_hmm's device memory chunk (its default size), and where the guest's
# command line reserves the two DEVICE_COHERENT chunks: the top of a 4 GB
# guest's RAM (q35: 2 GB below the PCI hole, 4-6 GB above it).
HMM_CHUNK_BYTES = 256 << 20
HMM_COHERENT_START = 0x160000000
DAX_FS_ENV = {"REBINDS": str(DAX_FS_REBINDS), "FILES": "4", "FILE_MIB": "8"}
# Boot scenarios use this share of the memory available after boot (lib.sh's
# fill_memory()); the bench's large guests do not.
BOOT_FILL = {"FILL_PCT": "75"}


def _rebinds_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    return sc.sized(4, b.pmem_gb, REBINDS=str(b.rebinds), DATA_MIB="4")


def _kmem_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    return sc.sized(3, b.kmem_gb, CYCLES="3" if b.quick else "5", FILL_MIB="64")


def _hugetlb_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    # At most 1 GB dirtied before the timed allocation, not all of it (the
    # test scenario dirties all): dirtying 16 GB under TCG costs more than
    # the allocation and does not change what init_on_alloc zeroes.
    return sc.sized(3 + b.hugepages * 2 // 1024, HUGEPAGES=str(b.hugepages),
                    ALLOCS="3" if b.quick else "5", THP_MIB="16",
                    CHECK_MIB="64" if b.quick else "256",
                    DIRTY_MIB=str(min(1024, b.hugepages * 2)))


def _boot_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    # Boot alone: filling a large guest's memory under TCG takes long and
    # is not what the row times.
    return sc.sized(b.boot_gb, FILL_PCT="0")


def _gigantic_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    # virtme-ng's CPU: both kernels clear through the caches. icount counts
    # a REP STOSB byte as an instruction and a MOVNTI as one per 8 bytes,
    # so the streaming variant of the test's CPU would show a count the
    # emulator makes, not memory time (which `bench native` measures).
    return replace(sc.sized(sc.memory_gb, ROUNDS="3" if b.quick else "5"), cpu="")


NONE_POSTED = "none posted"

# The fast-paths guest: Intel's CPU model, on which x86-64 streams large
# clears with MOVNTI (TCG has no CLZERO).
FAST_PATHS_CLEAR = "MOVNTI"
FAST_PATHS_CPUS = 2
FAST_PATHS = Scenario(
    name="fast-paths",
    script="fast-paths",
    description="the kernel's own reports of every memmap init's path (boot, deferred, "
                "a devdax bind, dax kmem blocks onlined) and of its large clear, with "
                "every fast path on; then the onlined memory used",
    memory_gb=3, pmem_gb=1, env={"SWITCH": "", "CPUS": str(FAST_PATHS_CPUS)},
    append=["mminit_loglevel=3"], check=check_fast_paths,
    configs=(DEFER_CONFIG, arches.DEBIAN_CONFIG), cpu=arches.INTEL_TCG_CPU,
    cpus=FAST_PATHS_CPUS, hot_adds=True)


def without(switch: switches.Switch) -> Scenario:
    """fast-paths booted with @switch: that path, and only that one, off."""
    return replace(FAST_PATHS, name=f"without-{switch.name}",
                   description=f"fast-paths booted with {switch.param}: {switch.turns_off}",
                   env={**FAST_PATHS.env, "SWITCH": switch.name},
                   append=[*FAST_PATHS.append, switch.param])

# The 1 GB hugetlb page reserved at boot, also with HVO.
GIGANTIC = Scenario(
    name="hugetlb-1g",
    script="hugetlb-1g",
    description="the 1 GB hugetlb page reserved at boot, zeroed for a file by "
                "a write fault in its middle (timed) or by fallocate(), then "
                "dirtied, four rounds: each time it reads zero",
    memory_gb=4, env={"ROUNDS": "4"}, append=["hugepagesz=1G", "hugepages=1"],
    check=check_gigantic, configs=ALL_CONFIGS, on_base=True,
    cpu=arches.INTEL_TCG_CPU,
    bench=(BenchRow(
        "hugetlb-1g-fault",
        lambda b: "fault in a 1 GB hugetlb page (zeroed by the fault)",
        _gigantic_resized, NONE_POSTED, result_ns="gigantic_fault_ns", full_only=True,
        label="1 GB hugetlb fault"),))


SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in [
        Scenario(
            name="fsdax-dev",
            script="fsdax-rebind",
            description="fsdax map=dev (memmap on the device, altmap) on a 4 GB "
                        f"legacy pmem region, {REBINDS} unbind/bind, data checksummed",
            memory_gb=5, pmem_gb=4, env={"REBINDS": str(REBINDS), "MAP": "dev"},
            check=check_rebinds, configs=ALL_CONFIGS,
            bench=(BenchRow(
                "fsdax-rebind", lambda b: f"memmap init per rebind, {b.pmem_gb} GB fsdax map=dev",
                _rebinds_resized, Reference("nd_pmem 100 GB rebind", 244.28, 96.79, "ms"),
                first_bind_apart=True, parallel=True, label="fsdax map=dev"),
                   BenchRow(
                "fsdax-rebind-debian",
                lambda b: f"memmap init per rebind, {b.pmem_gb} GB fsdax map=dev, "
                          "Debian's config",
                _rebinds_resized, NONE_POSTED, first_bind_apart=True, full_only=True,
                label="debian: fsdax map=dev", config=arches.DEBIAN_CONFIG))),
        Scenario(
            name="fsdax-mem",
            script="fsdax-rebind",
            description=f"fsdax map=mem (memmap in RAM), {REBINDS} unbind/bind",
            memory_gb=5, pmem_gb=4, env={"REBINDS": str(REBINDS), "MAP": "mem"},
            check=check_rebinds, configs=("lab", arches.DEBIAN_CONFIG)),
        Scenario(
            name="devdax-4k",
            script="devdax-rebind",
            description=f"devdax align=4K (order-0 pages), {REBINDS} rebinds of dax_pmem",
            memory_gb=5, pmem_gb=4, env={"REBINDS": str(REBINDS), "ALIGN": "4K"},
            check=check_devdax, configs=("lab", arches.DEBIAN_CONFIG)),
        Scenario(
            name="devdax-2m",
            script="devdax-rebind",
            description=f"devdax align=2M (compound pages), {REBINDS} rebinds of dax_pmem",
            memory_gb=5, pmem_gb=4, env={"REBINDS": str(REBINDS), "ALIGN": "2M"},
            check=check_devdax, configs=ALL_CONFIGS,
            bench=(BenchRow(
                "devdax-rebind",
                lambda b: f"memmap init per rebind, {b.pmem_gb} GB devdax align=2M",
                _rebinds_resized,
                Reference("dax_pmem 100 GB align=2M rebind", 273.31, 119.04, "ms"),
                first_bind_apart=True, parallel=True, label="devdax align=2M"),)),
        Scenario(
            name="devdax-1g",
            script="devdax-rebind",
            description=f"devdax align=1G (1 GB compound pages), {REBINDS} rebinds",
            memory_gb=5, pmem_gb=4,
            env={"REBINDS": str(REBINDS), "ALIGN": "1G"},
            check=check_devdax, configs=("lab", arches.DEBIAN_CONFIG)),
        Scenario(
            name="fsdax-fs-dev",
            script="fsdax-fs",
            description="ext4 -o dax on fsdax map=dev: files written through shared "
                        "mappings, placed on the namespace, pinned by direct I/O, "
                        f"shared across fork; {DAX_FS_REBINDS} umount/rebind/mount rounds",
            memory_gb=5, pmem_gb=4, pmem_regions=2, env=DAX_FS_ENV | {"MAP": "dev"},
            check=check_dax_fs, configs=ALL_CONFIGS, on_base=True),
        Scenario(
            name="fsdax-fs-mem",
            script="fsdax-fs",
            description="ext4 -o dax on fsdax map=mem (memmap in RAM), as fsdax-fs-dev",
            memory_gb=5, pmem_gb=4, pmem_regions=2, env=DAX_FS_ENV | {"MAP": "mem"},
            check=check_dax_fs, configs=("lab", "vm", arches.DEBIAN_CONFIG), on_base=True),
        Scenario(
            name="rebind-stress",
            script="rebind-stress",
            description=f"one 4 GB pmem region reconfigured {STRESS_CYCLES} times, "
                        "rotating fsdax map=dev/mem and devdax align 4K/2M/1G, each "
                        "layout bound and rebound over fresh random data, checksummed",
            memory_gb=5, pmem_gb=4, env={"CYCLES": str(STRESS_CYCLES), "DATA_MIB": "8"},
            check=check_rebind_stress, configs=("vm",)),
        Scenario(
            name="fsdax-pair",
            script="fsdax-pair",
            description="two 2 GB fsdax map=dev namespaces on two pmem regions, "
                        f"bound at the same time x{REBINDS}, each memmap init shared "
                        "among the CPUs, data checksummed",
            memory_gb=5, pmem_gb=4, pmem_regions=2,
            env={"ROUNDS": str(REBINDS)}, check=check_pair,
            # Not vm or debug: under DEBUG_VM each bind poisons its new sections'
            # memmap inside the hotplug lock (page_init_poison), which takes
            # about as long as the template init, so the second bind's init
            # mostly starts as the first's ends and the overlap the check
            # asks for comes by chance (none in 3 rounds on vm on 2026-11-24,
            # none on debug on 2026-11-25).
            configs=("lab",)),
        Scenario(
            name="kmem-online",
            script="kmem-online",
            description="a 1 GB pmem region as devdax onlined movable as system RAM "
                        "(dax kmem), 3/4 of it filled from userspace and read back, then "
                        f"{REBINDS} cycles of its blocks offlined, onlined and an eighth "
                        "filled and read back; offlined at the end",
            memory_gb=3, pmem_gb=1, env={"CYCLES": str(REBINDS)},
            check=check_kmem_online, configs=ALL_CONFIGS, hot_adds=True,
            bench=(BenchRow(
                "kmem-online",
                lambda b: f"memmap init per onlined memory block, {b.kmem_gb} GB dax kmem",
                _kmem_resized, f"{NONE_POSTED} (asked for in review, never sent)",
                calls="hotplug_inits", label="dax kmem: memmap init"),
                   BenchRow(
                "kmem-online-pages",
                lambda b: f"online_pages() per memory block, {b.kmem_gb} GB dax kmem",
                _kmem_resized, NONE_POSTED, calls="onlines", full_only=True,
                label="dax kmem: online_pages()"))),
        Scenario(
            name="kmem-memmap-on-memory",
            script="kmem-online",
            description="kmem-online with memmap_on_memory: each hot-added block's memmap "
                        "in its own first pages, initialized apart from the rest of the "
                        "block and never freed; hugetlb folios on those blocks keep "
                        "theirs under HVO",
            memory_gb=3, pmem_gb=1,
            env={"CYCLES": str(REBINDS), "MEMMAP_ON_MEMORY": "1", "HVO": "1"},
            append=["memory_hotplug.memmap_on_memory=1"],
            check=check_kmem_online, configs=("lab", "vm", arches.DEBIAN_CONFIG), on_base=True,
            hot_adds=True,
            bench=(BenchRow(
                "kmem-memmap-on-memory-debian",
                lambda b: f"online_pages() per memory block, {b.kmem_gb} GB dax kmem with "
                          "memmap_on_memory, Debian's config",
                _kmem_resized, NONE_POSTED, calls="onlines", full_only=True,
                label="debian: kmem memmap_on_memory online_pages()",
                config=arches.DEBIAN_CONFIG),)),
        Scenario(
            name="boot-memmap",
            script="boot-memmap",
            description="boot: the struct pages of all boot memory initialized "
                        "in memmap_init() and freed by memblock_free_all(), both timed; "
                        f"then {BOOT_FILL['FILL_PCT']}% of the available memory filled "
                        "from userspace and read back",
            memory_gb=3, env=BOOT_FILL, check=check_boot_memmap,
            configs=tuple(c for c in ALL_CONFIGS if c not in DEFERRING_CONFIGS),
            bench=(BenchRow(
                "boot-memmap", lambda b: f"memmap_init() of boot memory, {b.boot_gb} GB guest",
                _boot_resized, NONE_POSTED, calls="boot_inits",
                label="boot: memmap_init()"),
                   BenchRow(
                "boot-memmap-free",
                lambda b: f"memmap_init() and memblock_free_all() of boot memory, "
                          f"{b.boot_gb} GB guest",
                _boot_resized, NONE_POSTED, calls="boot_init_and_free",
                full_only=True, label="boot: memmap_init() + memblock_free_all()"))),
        Scenario(
            name="boot-deferred",
            script="boot-memmap",
            description="boot with deferred struct page init: memmap_init() of boot memory "
                        "but the rest of each node's highest zone, which a thread per node "
                        "initializes and frees after SMP is up, all timed; then memory "
                        "filled as in boot-memmap",
            memory_gb=3, env=BOOT_FILL, check=check_boot_deferred, configs=DEFERRING_CONFIGS,
            bench=(BenchRow(
                "boot-deferred",
                lambda b: f"deferred init of a node's memory, {b.boot_gb} GB guest, "
                          "kernels of config defer",
                _boot_resized, NONE_POSTED, calls="deferred_inits",
                full_only=True, label="boot: deferred init", config=DEFER_CONFIG),
                   BenchRow(
                "boot-deferred-debian",
                lambda b: f"deferred init of a node's memory, {b.boot_gb} GB guest, "
                          "Debian's config",
                _boot_resized, NONE_POSTED, calls="deferred_inits",
                full_only=True, label="debian: boot deferred init", config=arches.DEBIAN_CONFIG))),
        Scenario(
            name="numa-pmem",
            script="numa-pmem",
            description="NUMA: two nodes with two CPUs each and one with memory only, "
                        "deferred init on each; a legacy pmem region on node 1 and one "
                        "on the memory-only node as fsdax map=dev, "
                        f"{REBINDS} rebinds each, data checksummed",
            memory_gb=4, pmem_gb=2, pmem_regions=2, cpus=2 * NUMA_NODE_CPUS, numa=NUMA_NODES,
            env={"ROUNDS": str(REBINDS)}, check=check_numa,
            configs=NUMA_CONFIGS),
        Scenario(
            name="device-private",
            script="device-private",
            description=f"DEVICE_PRIVATE: test_hmm load/unload x{LOADS} "
                        "(2 x 256 MB memremap_pages each)",
            memory_gb=3, env={"LOADS": str(LOADS), "CHUNK_MB": str(HMM_CHUNK_BYTES >> 20),
                              "MODULE": "@out/lib/test_hmm.ko"},
            check=check_device_private, configs=HMM_CONFIGS,
            bench=(BenchRow(
                "device-private", lambda b: f"memremap of {b.chunk_gb} GB DEVICE_PRIVATE",
                lambda sc, b: sc.sized(3 + 2 * b.chunk_gb // 64,
                                       LOADS="3" if b.quick else "10",
                                       CHUNK_MB=str(b.chunk_gb * 1024)),
                Reference("64 GB memremap", 116.7, 54.6, "ms"), parallel=True,
                label="DEVICE_PRIVATE memremap"),)),
        Scenario(
            name="hmm-tests",
            script="hmm-tests",
            description="the kernel's hmm-tests selftest against test_hmm with two "
                        "DEVICE_PRIVATE and two DEVICE_COHERENT devices (on RAM the "
                        "command line reserves): every case must pass",
            memory_gb=4,
            env={"MODULE": "@out/lib/test_hmm.ko", "HMM_TESTS": "@out/hmm-tests",
                 "SPM_ADDR0": hex(HMM_COHERENT_START),
                 "SPM_ADDR1": hex(HMM_COHERENT_START + HMM_CHUNK_BYTES)},
            append=[f"memmap={2 * HMM_CHUNK_BYTES >> 20}M${HMM_COHERENT_START:#x}"],
            check=check_hmm_tests, configs=HMM_CONFIGS, on_base=True),
        Scenario(
            name="hugetlb-init-on-alloc",
            script="hugetlb-zero",
            description="init_on_alloc=1: 256 x 2 MB hugetlb pages allocated (timed) "
                        "over dirtied memory, hugetlb and THP memory read zero",
            memory_gb=3, env={"HUGEPAGES": "256", "THP_MIB": "64"},
            append=["init_on_alloc=1"], check=check_zeroing, configs=ALL_CONFIGS,
            bench=(BenchRow(
                "hugetlb-init-on-alloc",
                lambda b: f"allocate {b.hugepages} x 2 MB hugetlb, init_on_alloc=1",
                _hugetlb_resized,
                Reference("16 GB of 2 MB hugetlb, init_on_alloc=1", 0.445, 0.166, "s"),
                result_ns="hugetlb_alloc_ns", label="init_on_alloc=1 hugetlb"),)),
        GIGANTIC,
        replace(GIGANTIC, name="hugetlb-1g-hvo",
                description="hugetlb-1g with the vmemmap of hugetlb pages freed "
                            "(hugetlb_free_vmemmap=on) and init_on_alloc=1 (two rounds), on "
                            "kernels that build HVO; then 3 times a second page allocated at run "
                            "time, zeroed and read as before, and freed, then the boot page "
                            "freed: the vmemmap freed and restored each time",
                # Room for a second 1 GB page: ZONE_NORMAL spans 4 GB to the
                # top, where the boot page and the memmap take 2 GB, and
                # unmovable pages may land in any of the 1 GB ranges left.
                memory_gb=8,
                env={"ROUNDS": "2", "HVO": "1", "INIT_ON_ALLOC": "1", "RUNTIME_ALLOCS": "3"},
                append=GIGANTIC.append + ["hugetlb_free_vmemmap=on", "init_on_alloc=1"],
                configs=HVO_CONFIGS, on_base=False, bench=()),
        Scenario(
            name="virtio-mem",
            script="virtio-mem",
            description="a 2 GB virtio-mem device, empty at boot, resized through QEMU's "
                        f"monitor: {REBINDS} times 1 GB plugged, onlined movable, filled "
                        "from userspace and read back, then unplugged",
            memory_gb=3, virtio_mem_gb=2,
            env={"CYCLES": str(REBINDS), "PLUG_MIB": "1024"},
            check=check_virtio_mem, configs=VIRTIO_MEM_CONFIGS, on_base=True,
            hot_adds=True),
        Scenario(
            name="fault-inject",
            script="fault-inject",
            description="faults injected: an fsdax map=dev bind with its Nth allocation "
                        "failed, for every N until none is met, and with only the chunks' "
                        "allocation failed; dax kmem onlines refused by the memory notifier; "
                        f"{CPU_OFFLINE_ROUNDS} binds or more while CPU 1 goes offline "
                        "and back over and over, until one memmap init met an offline "
                        "under way; no kmemleak report",
            memory_gb=3, pmem_gb=2, pmem_regions=2,
            env={"CPU_ROUNDS": str(CPU_OFFLINE_ROUNDS)},
            check=check_fault_inject, configs=FAULT_CONFIGS, hot_adds=True, timeout=3600),
        Scenario(
            name="mm-selftests",
            script="mm-selftests",
            description="the kernel's mm selftests (run_vmtests.sh, all but the "
                        "destructive ones; swap on a pmem region) and memory-hotplug "
                        "selftest, built from the kernel's tree: no test that passes on "
                        "base fails or skips on patched",
            memory_gb=4, pmem_gb=1, env={"KSELFTEST": f"@out/{selftests.KSELFTEST_DIR}",
                                         "KCONFIG": "@out/.config"},
            check=check_selftests, configs=selftests.KSELFTEST_CONFIGS, on_base=True,
            timeout=3600, compare=compare_selftests),
        FAST_PATHS,
        *(without(sw) for sw in switches.SWITCHES),
        Scenario(
            name="runner-catches-warn",
            script="provoke-warn",
            description="LKDTM WARNING from a script that exits 0: the runner "
                        "must fail the run from the console alone",
            expect_failure="WARNING"),
    ]
}


def get(name: str) -> Scenario:
    if name not in SCENARIOS:
        raise LabError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    return SCENARIOS[name]


def bench_rows() -> dict[str, BenchRow]:
    """Every row `memlab bench` measures, by name, in table order."""
    return {row.name: row for sc in SCENARIOS.values() for row in sc.bench}
