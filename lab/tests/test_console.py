"""Console parsing on captured real guest logs (lab/tests/data/guest-*.log)."""
from dataclasses import replace

from memlab import catalog, console
from memlab.checks import check_kmem_online, check_pair, check_rebinds
from conftest import DATA


def read(name: str) -> str:
    return (DATA / name).read_text(errors="replace")


def test_clean_boot_has_no_failures():
    con = console.parse(read("guest-hello.log"))
    assert con.failures == []
    assert con.result("done") == "1"


def test_warn_is_caught_even_though_the_script_exited_zero():
    con = console.parse(read("guest-provoke-warn.log"))
    kinds = [f.kind for f in con.failures]
    assert "WARNING" in kinds
    assert con.result("done") == "1"          # the script itself was happy


def test_fsdax_rebind_log_passes_the_rebind_checks():
    con = console.parse(read("guest-fsdax-rebind.log"))
    assert con.failures == []
    assert len(con.memmap_inits) == 4         # bind + 3 rebinds
    assert check_rebinds(con, {"REBINDS": "3"}) == []
    assert all(i.ns > 0 for i in con.memmap_inits)


def test_rebind_check_reports_wrong_count_pages_and_checksum():
    con = console.parse(read("guest-fsdax-rebind.log"))
    con.memmap_inits = con.memmap_inits[:2]
    con.memmap_inits[1] = console.MemmapInit(pages=123, ns=1)
    con.results.append({"checksum_after": "0" * 64})
    problems = " | ".join(check_rebinds(con, {"REBINDS": "3"}))
    assert "expected 4 memmap_init_zone_device() calls" in problems
    assert "[123] pages" in problems
    assert "checksum" in problems


def test_script_output_that_looks_like_a_warning_is_not_a_kernel_warning():
    text = "WARNING: this came from a guest script, not printk\nMEMLAB done=1\n"
    assert console.parse(text).failures == []


def test_each_failure_kind_is_recognized():
    lines = {
        "panic": "[    5.000000] Kernel panic - not syncing: Fatal exception",
        "oops": "[    5.000000] Oops: general protection fault, probably for non-canonical address",
        "KASAN": "[    5.000000] BUG: KASAN: slab-out-of-bounds in memmap_init_zone_device+0x1/0x2",
        "BUG": "[    5.000000] BUG: sleeping function called from invalid context at mm/x.c:1",
        "WARNING": "[    5.000000] WARNING: CPU: 0 PID: 1 at mm/mm_init.c:1090 f+0x1/0x2",
    }
    for kind, line in lines.items():
        failures = console.parse(line + "\n").failures
        assert [f.kind for f in failures] == [kind], kind


def test_memmap_line_is_parsed():
    line = "[   12.5] memmap_init_zone_device initialised 1015808 pages in 734512345ns"
    con = console.parse(line)
    assert con.memmap_inits == [console.MemmapInit(1015808, 734512345, end_s=12.5)]
    assert con.memmap_inits[0].us == 734512.345


def test_zeroing_log_passes_and_a_dirty_page_fails():
    from memlab.checks import check_zeroing
    con = console.parse(read("guest-hugetlb-zero.log"))
    assert con.failures == []
    assert check_zeroing(con, {"ALLOCS": "5"}) == []
    assert any("expected 6 timed allocations, saw 5" in p
               for p in check_zeroing(con, {"ALLOCS": "6"}))
    con.results.append({"file_first_nonzero": "4096"})
    assert any("not zero at byte 4096" in p for p in check_zeroing(con, {"ALLOCS": "5"}))


def test_boot_memmap_log_has_one_timed_memmap_init_and_free():
    from memlab.checks import check_boot_memmap
    con = console.parse(read("guest-boot-memmap.log"))
    assert con.failures == []
    assert [(i.pages, i.ns) for i in con.boot_inits] == [(786301, 8064407)]
    assert [(f.pages, f.ns) for f in con.boot_frees] == [(752095, 13363176)]
    assert [(b.pages, b.ns) for b in con.boot_init_and_free] == [(786301, 8064407 + 13363176)]
    assert check_boot_memmap(con, {}) == []
    con.results.append({"mem_total_kb": str(786301 * 4 + 4)})
    assert any("kernel manages" in p for p in check_boot_memmap(con, {}))
    con.boot_frees[0] = console.MemmapInit(786302, 1)
    assert any("freed 786302 pages" in p for p in check_boot_memmap(con, {}))
    con.boot_inits.clear()
    assert check_boot_memmap(con, {}) == [
        "expected 1 timed boot memmap_init() and 1 memblock_free_all(), saw 0 and 1"]


def test_fsdax_pair_log_passes_the_pair_checks():
    con = console.parse(read("guest-fsdax-pair.log"))
    assert not con.failures
    assert check_pair(con, {"ROUNDS": "3"}) == []
    assert [s.threads for s in con.memmap_shares] == [2] * 8


def test_path_and_threads_line_is_parsed():
    con = console.parse("[   15.92] memmap_init_zone_device initialised 515584 pages in "
                        "12ms, from a template, streamed, up to 2 threads\n")
    assert con.memmap_shares == [console.MemmapShare(515584, 2, "from a template, streamed")]
    assert con.device_inits_ms == [(515584, 12)]
    assert con.memmap_inits == []


def test_stock_kernels_line_gives_pages_and_milliseconds_only():
    con = console.parse("[   80.1] memmap_init_zone_device initialised 1024000 pages in 7ms\n")
    assert con.device_inits_ms == [(1024000, 7)]
    assert con.memmap_shares == []


def test_mminit_trace_gives_each_ranges_path_and_state():
    con = console.parse(
        "[    0.0] mminit::memmap_init node 0 zone Normal: 32768 pages from a template, "
        "streamed, free\n"
        "[    2.1] mminit::memmap_init node 1 zone Normal: deferred pages page by page, in use\n"
        "[    9.3] mminit::memmap_init node 0 zone Movable: 32768 pages from a template, "
        "offline\n"
        "[    0.5] clear_pages: runs of 8 to 32 MB with MOVNTI\n")
    assert con.memmap_paths == [
        console.MemmapPath(0, "Normal", 32768, "from a template, streamed", "free"),
        console.MemmapPath(1, "Normal", None, "page by page", "in use"),
        console.MemmapPath(0, "Movable", 32768, "from a template", "offline")]
    assert con.memmap_paths[1].deferred
    assert con.clear_pages_large == "MOVNTI"


def test_pair_check_reports_one_thread_and_binds_one_after_the_other():
    con = console.parse(read("guest-fsdax-pair.log"))
    con.memmap_shares[3] = console.MemmapShare(515584, 1)
    # Every round's second init moved to a second after the first ended.
    con.memmap_inits = [replace(i, end_s=i.end_s + n * 1.0)
                        for n, i in enumerate(con.memmap_inits)]
    problems = " | ".join(check_pair(con, {"ROUNDS": "3"}))
    assert "ranges shared among [1] threads, expected 2 (2 CPUs)" in problems
    assert "never ran at the same time in 3 rounds" in problems


def test_memmap_inits_overlap_by_their_console_times():
    a = console.MemmapInit(1, 10_000_000, end_s=1.010)     # 1.000 .. 1.010
    assert a.overlaps(console.MemmapInit(1, 10_000_000, end_s=1.015))
    assert not a.overlaps(console.MemmapInit(1, 5_000_000, end_s=1.016))


def test_kmem_online_log_passes_the_online_checks():
    con = console.parse(read("guest-kmem-online.log"))
    assert not con.failures
    assert check_kmem_online(con, {"CYCLES": "3"}) == []
    assert len(con.onlines) == len(con.hotplug_inits) == 7 * 4
    assert {c.pages for c in con.onlines} == {32768}
    assert con.memmap_inits == []


def test_kmem_memmap_on_memory_log_initializes_each_blocks_memmap_apart():
    env = {"CYCLES": "3", "MEMMAP_ON_MEMORY": "1"}
    con = console.parse(read("guest-kmem-memmap-on-memory.log"))
    assert not con.failures
    assert check_kmem_online(con, env) == []
    assert [c.pages for c in con.hotplug_inits[:2]] == [512, 32768 - 512]
    assert {c.pages for c in con.onlines} == {32768 - 512}
    # The same log read as a plain kmem run, and a plain run read as this one.
    problems = " | ".join(check_kmem_online(con, {"CYCLES": "3"}))
    assert "dax0.0 has memmap_on_memory=1, asked for 0" in problems
    assert "expected 28 hot-added memmap init calls (7 blocks x (1 + 3 cycles)), saw 56" \
        in problems
    plain = console.parse(read("guest-kmem-online.log"))
    assert "online_pages() over [32768] pages, expected [32256] per online" in \
        " | ".join(check_kmem_online(plain, env))


def test_kmem_memmap_on_memory_debian_log_keeps_the_self_hosted_memmap_under_hvo():
    sc = catalog.get("kmem-memmap-on-memory")
    assert sc.env["HVO"] == "1"
    con = console.parse(read("guest-kmem-memmap-on-memory-debian.log"))
    assert not con.failures
    assert sc.problems(con) == []
    assert (con.result("hvo_folios"), con.result("hvo_memmap_delta")) == ("224", "0")


def test_kmem_hvo_check_wants_folios_on_the_blocks_and_the_memmap_count_kept():
    env = {"CYCLES": "3", "MEMMAP_ON_MEMORY": "1", "HVO": "1"}
    con = console.parse(read("guest-kmem-memmap-on-memory.log"))
    assert check_kmem_online(con, env) == []
    con.results = [r for r in con.results if "hvo_folios" not in r]
    assert check_kmem_online(con, env) == [
        "scenario did not report its hugetlb folios on the self-hosted memmap (HVO)"]
    # 7 blocks of 128 MB: 224 folios of 2 MB.
    con.results.append({"hvo_folios": "224", "hvo_movable_taken": str(224 * 512 + 30),
                        "hvo_memmap_delta": "0"})
    assert check_kmem_online(con, env) == []
    # HVO freed 7 of the 8 memmap pages of each folio, some folios elsewhere.
    con.results[-1].update(hvo_folios="200", hvo_movable_taken=str(190 * 512),
                           hvo_memmap_delta=str(-7 * 200))
    problems = " | ".join(check_kmem_online(con, env))
    assert "200 hugetlb folios allocated, expected 224 (half of the onlined memory)" in problems
    assert "the 200 hugetlb folios took 97280 pages of ZONE_MOVABLE" in problems
    assert "HVO changed the count of memmap pages by -1400" in problems


def test_kmem_online_check_reports_missing_onlines_and_unused_memory():
    con = console.parse(read("guest-kmem-online.log"))
    con.onlines = con.onlines[:-1]
    con.hotplug_inits[0] = replace(con.hotplug_inits[0], pages=100)
    fill = next(r for r in con.results if "movable_free_filled" in r)
    fill["movable_free_filled"] = fill["movable_free_before"]
    problems = " | ".join(check_kmem_online(con, {"CYCLES": "3"}))
    assert "expected 28 online_pages() calls (7 blocks x (1 + 3 cycles)), saw 27" in problems
    assert "hot-added memmap init over [100, 32768] pages, expected [32768] per online" \
        in problems
    assert "fill 1: the files (172032 pages) took 0 pages of ZONE_MOVABLE" in problems


def test_a_bare_boot_without_timestamps_still_fails_on_bad_pages():
    # The arm64 KUnit kernel prints no timestamps; its boot froze deferred
    # pages offline (a deliberately broken fill), and DEBUG_VM reported them.
    text = read("bare-arm64-bad-page.log")
    assert console.parse(text).failures == []
    bad = console.parse(text, bare=True).failures
    assert [f.kind for f in bad] == ["BUG"]
    assert "Bad page state" in bad[0].line


def test_gigantic_log_passes_and_a_dirty_round_fails():
    from memlab.checks import check_gigantic
    con = console.parse(read("guest-hugetlb-1g.log"))
    assert con.failures == []
    assert check_gigantic(con, {"ROUNDS": "4"}) == []
    assert any("expected 5 rounds and 0 pages allocated at run time, saw 4 pages zeroed" in p
               for p in check_gigantic(con, {"ROUNDS": "5"}))
    con.results.append({"gigantic_first_nonzero": "33562624"})
    assert any("round 4: gigantic page not zero at byte 33562624" in p
               for p in check_gigantic(con, {"ROUNDS": "5"}))


def test_the_deferred_init_lines_are_parsed():
    con = console.parse("[    1.500000] deferred_init_memmap: node 0: 196608 deferred pages "
                        "in 41234567ns\n")
    assert [(d.pages, d.ns, d.node) for d in con.deferred_inits] == [(196608, 41234567, 0)]


def test_boot_fill_must_cover_its_share_and_read_back():
    from memlab.checks import check_memory_used
    from memlab.catalog import BOOT_FILL
    con = console.Console(results=[{"available_kb": "2048000", "fill_mib": "1504",
                                    "available_filled_kb": "500000", "bad_files": "0"}])
    assert check_memory_used(con, BOOT_FILL) == []        # 75% of 2000 MiB is 1500
    assert check_memory_used(con, {"FILL_PCT": "0"}) == []
    con.results.append({"fill_mib": "1488"})
    assert any("filled 1488 MiB" in p for p in check_memory_used(con, BOOT_FILL))
    con.results.append({"fill_mib": "1504", "bad_files": "2"})
    assert check_memory_used(con, BOOT_FILL) == ["2 files read back other data than written"]
    con.results.append({"bad_files": "0", "available_filled_kb": "1400000"})
    assert check_memory_used(con, BOOT_FILL) == [
        "the files (1504 MiB) took 632 MiB of the available memory: the memory was not used"]
    assert check_memory_used(console.Console(), BOOT_FILL) == [
        "the script did not report the memory it filled"]


def test_boot_deferred_log_has_a_deferred_init_per_node():
    from memlab.checks import check_boot_deferred
    from memlab.catalog import BOOT_FILL
    con = console.parse(read("guest-boot-deferred.log"))
    assert con.failures == []
    assert [(d.pages, d.ns) for d in con.deferred_inits] == [(215260, 171764138)]
    assert check_boot_deferred(con, BOOT_FILL) == []
    con.results.append({"memory_nodes": "2"})
    assert check_boot_deferred(con, BOOT_FILL) == []    # node 1's zone too small to defer
    con.deferred_inits.append(con.deferred_inits[0])
    con.results.append({"memory_nodes": "1"})
    assert any("each of up to 1 nodes with memory, saw 2" in p
               for p in check_boot_deferred(con, BOOT_FILL))
    con.deferred_inits.pop()
    con.deferred_inits[0] = console.MemmapInit(0, 1)
    assert any("nothing was deferred" in p for p in check_boot_deferred(con, BOOT_FILL))
    con.deferred_inits[0] = console.MemmapInit(786302, 1)
    assert any("freed 786302 pages" in p for p in check_boot_deferred(con, BOOT_FILL))


def test_numa_log_has_every_node_and_region_where_asked():
    from memlab.checks import check_numa
    from memlab.catalog import get
    env = get("numa-pmem").env
    con = console.parse(read("guest-numa-pmem.log"))
    assert con.failures == []
    assert sorted(d.node for d in con.deferred_inits) == [0, 1, 2]
    assert check_numa(con, env) == []
    # A node that deferred nothing, a region elsewhere, a lost bind: each fails.
    con.deferred_inits.pop()
    assert any("deferred init lines from nodes" in p for p in check_numa(con, env))
    con = console.parse(read("guest-numa-pmem.log"))
    con.results.append({"region1_node": "0", "node2_cpus": "3"})
    problems = check_numa(con, env)
    assert "pmem region 1 is on node 0, expected 2" in problems
    assert "node 2 has CPUs 3" in problems
    con = console.parse(read("guest-numa-pmem.log"))
    con.memmap_inits.pop()
    assert any("expected 8 memmap_init_zone_device() calls" in p for p in check_numa(con, env))


def test_virtio_mem_log_plugs_uses_and_unplugs_every_cycle():
    from memlab.checks import check_virtio_mem
    from memlab.catalog import get
    env = get("virtio-mem").env
    con = console.parse(read("guest-virtio-mem.log"))
    assert con.failures == []
    assert len(con.onlines) == len(con.hotplug_inits) == 3 * 8
    assert check_virtio_mem(con, env) == []
    # A block left after an unplug, an online lost, memory not used: each fails.
    con.results.append({"blocks_left": "1"})
    assert any("blocks left online" in p for p in check_virtio_mem(con, env))
    con = console.parse(read("guest-virtio-mem.log"))
    con.onlines.pop()
    assert any("expected 24 online_pages() calls" in p for p in check_virtio_mem(con, env))
    con = console.parse(read("guest-virtio-mem.log"))
    fill = [r for r in con.results if "movable_free_filled" in r][1]
    fill["movable_free_filled"], fill["bad_files"] = fill["movable_free_before"], "2"
    problems = check_virtio_mem(con, env)
    assert "fill 2: 2 files read back other data than written" in problems
    assert any(p.startswith("fill 2: the files (196608 pages) took 0 pages") for p in problems)


def test_fault_inject_log_meets_every_fault_cleanly():
    from memlab.checks import check_fault_inject
    from memlab.catalog import get
    env = get("fault-inject").env
    con = console.parse(read("guest-fault-inject.log"))
    assert con.failures == []
    assert check_fault_inject(con, env) == []
    # Data lost after a fault, the chunks' fault not met, an online let
    # through, a leak: each fails.
    for result, problem in (({"fault_binds_bad": "1"}, "binds after a fault lost the data"),
                            ({"chunk_faults_left": "1"}, "the chunks' allocation was not failed"),
                            ({"onlines_refused": "6"}, "6 of 7 onlines refused"),
                            ({"kmemleak_reports": "2"}, "kmemleak reports 2 objects")):
        con = console.parse(read("guest-fault-inject.log"))
        con.results.append(result)
        assert any(problem in p for p in check_fault_inject(con, env)), result
    # CPU 1's offlines all outside the shared memmap inits, or the inits
    # not shared: the rounds proved nothing about an offline mid-init.
    con = console.parse(read("guest-fault-inject.log"))
    assert len(con.cpu_offlines) >= 8
    con.cpu_offlines = [(cpu, start + 1000, end + 1000) for cpu, start, end in con.cpu_offlines]
    assert "CPU 1 was never going offline during a memmap init it shared" in \
        " | ".join(check_fault_inject(con, env))
    con = console.parse(read("guest-fault-inject.log"))
    con.memmap_shares = [replace(s, threads=1) for s in con.memmap_shares]
    assert "CPU 1 was never going offline during a memmap init it shared" in \
        " | ".join(check_fault_inject(con, env))
