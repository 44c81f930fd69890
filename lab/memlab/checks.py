"""The guest scenarios' verdicts: each turns the parsed console of a run
(and the environment its script ran with) into a list of problems, empty
when the run passed. The facts a verdict weighs a run against (page size,
the NUMA guest's layout, test_hmm's chunk) live here with it."""
from __future__ import annotations

from . import guest, selftests, switches, waits
from .console import Console
from .runner import say

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


# test_hmm's device memory chunk (its default size).
HMM_CHUNK_BYTES = 256 << 20

# hmm-tests' cases that migrate THPs to a device (newer than 6.12;
# anon_write_child migrates one among its base pages). test_hmm gives huge
# pages to DEVICE_PRIVATE devices only: a DEVICE_COHERENT one is a single
# fixed range of base pages, which a THP request maps a second time
# (memremap_pages(): "Conflicting mapping in same section"), and the forced
# allocation failure and the 256 MB benchmark fail there. The hmm-tests
# scenario runs them on the private devices only where hmm-tests has all of
# them (6.12's has anon_write_child alone): scenarios/hmm-tests.sh.
HMM_DEVICE_THP_CASES = ("anon_write_child", "migrate_anon_huge_empty", "migrate_anon_huge_zero",
                        "migrate_anon_huge_free", "migrate_anon_huge_fault",
                        "migrate_partial_unmap_fault", "migrate_remap_fault",
                        "migrate_anon_huge_err", "migrate_anon_huge_zero_err",
                        "benchmark_thp_migration")
HMM_COHERENT_VARIANT = "hmm.hmm_device_coherent"
# hmm-tests' cases that time themselves against the harness's limit: the
# THP migration benchmark (7.2) runs past it under KASAN on TCG, on base
# and patched alike. KASAN kernels leave them out on every device.
HMM_SLOW_CASES = ("benchmark_thp_migration",)


def check_hmm_tests(con: Console, env: dict[str, str]) -> list[str]:
    """hmm-tests: every case passed, none skipped or failed, after test_hmm
    memremapped a chunk for each of its four devices; none left out but
    the device-THP cases on the coherent device and, on every device, those
    the environment names slow (SLOW_LEFT_OUT)."""
    problems: list[str] = []
    allowed = {f"{HMM_COHERENT_VARIANT}.{case}" for case in HMM_DEVICE_THP_CASES}
    unexpected = [case for case in con.result_values("hmm_left_out") if case not in allowed]
    slow = env.get("SLOW_LEFT_OUT", "").split()
    unexpected += [case for case in con.result_values("hmm_slow_left_out") if case not in slow]
    if unexpected:
        problems.append("hmm-tests left out cases it may not: " + ", ".join(unexpected))
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


def check_boot_two_nodes(con: Console, env: dict[str, str]) -> list[str]:
    """The boot a user waits for on a two-node machine: deferred init's
    checks, a thread's line from each node, and the wait found."""
    problems = check_boot_deferred(con, env) + waits.BOOT.problems(con)
    if con.result("memory_nodes") != "2" or len(con.deferred_inits) != 2:
        problems.append(f"expected two memory nodes with a deferred init thread each, saw "
                        f"{con.result('memory_nodes')} nodes and {len(con.deferred_inits)} "
                        "threads")
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


def check_user_wait(con: Console, env: dict[str, str], wait: waits.Wait) -> list[str]:
    """One of the user's waits (user-wait.sh, WAIT): marked once on the
    kernel's clock, and the work it waited for done in it: every new
    block onlined over all its pages (daxctl-online: the region's,
    virtio-mem: PLUG_MIB; MemTotal may show the last block before its
    online_pages() returns), or one ZONE_DEVICE memmap init
    (create-namespace)."""
    problems = wait.problems(con)
    if problems:
        return problems
    inside = wait.calls_in(con, wait.windows(con)[0])
    if env["WAIT"] == "create-namespace":
        if len(inside) != 1 or len(con.memmap_inits) != 1:
            problems.append(f"expected one memmap init, inside the wait: saw "
                            f"{len(con.memmap_inits)}, {len(inside)} inside")
        return problems
    added = (int(env["PLUG_MIB"]) << 20 if env["WAIT"] == "virtio-mem"
             else (_int(con.result("blocks")) or 0) * (_int(con.result("block_bytes")) or 0))
    onlined = sum(c.pages for c in inside) * PAGE_SIZE
    if not added or onlined != added or len(inside) != len(con.onlines):
        problems.append(f"{added} bytes added, {onlined} onlined inside the wait "
                        f"({len(inside)} of {len(con.onlines)} online_pages() calls)")
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


# The fast-paths guest asks x86-64 to stream large clears with MOVNTI
# (arches.TCG_CLEAR_STREAM: TCG has no CLZERO).
FAST_PATHS_CLEAR = "MOVNTI"


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
