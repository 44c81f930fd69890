"""Every guest scenario the lab runs, by name: its script and machine, the
configs it runs on, its verdict (checks.py) and what the bench measures on
it, resized to the host (scenario.py has the model)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable

from . import arches, guest, selftests, switches, waits
from .checks import (HMM_CHUNK_BYTES, HMM_DEVICE_THP_CASES, HMM_SLOW_CASES, NUMA_NODE_CPUS,
                     NUMA_NODES, check_boot_deferred, check_boot_memmap,
                     check_boot_two_nodes, check_dax_fs, check_devdax,
                     check_device_private, check_fast_paths, check_fault_inject,
                     check_gigantic, check_hmm_tests, check_kmem_online, check_numa,
                     check_pair, check_rebind_stress, check_rebinds, check_selftests,
                     check_user_wait,
                     check_virtio_mem, check_zeroing, compare_selftests)
from .runner import LabError
from .scenario import NONE_POSTED, BenchRow, BenchSizes, ConfigsWith, Scenario
from .waits import Wait

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
DEFERRING = ConfigsWith("CONFIG_DEFERRED_STRUCT_PAGE_INIT")
# Those with NUMA (Debian's).
NUMA = ConfigsWith("CONFIG_NUMA")
# Those that build HVO (the vmemmap of hugetlb pages freed), as Debian's do,
# for the gigantic page reserved at boot: not under DEBUG_VM, where HVO
# warns about that page on base and patched alike (docs/testing.md says
# why).
HVO = ConfigsWith("CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP", unless="CONFIG_DEBUG_VM")
# Those with DEVICE_PRIVATE (test_hmm), which Debian's kernels do not build.
HMM = ConfigsWith("CONFIG_DEVICE_PRIVATE")
VIRTIO_MEM = ConfigsWith("CONFIG_VIRTIO_MEM")
FAULTS = ConfigsWith("CONFIG_FAULT_INJECTION")
DAX_FS_REBINDS = 2
STRESS_CYCLES = 10     # each of the 5 layouts twice
# Where the guest's command line reserves the two DEVICE_COHERENT chunks of
# test_hmm: the top of a 4 GB guest's RAM (q35: 2 GB below the PCI hole,
# 4-6 GB above it).
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


def _debian_boot_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    # Debian's kernel picks its physical load address at random (KASLR),
    # which moves what memblock reserves and so how many pages each boot
    # defers: with nokaslr every boot times the same work.
    resized = _boot_resized(sc, b)
    return replace(resized, append=[*resized.append, "nokaslr"])


def _two_nodes(gb: int) -> tuple[guest.NumaNode, ...]:
    """Two nodes sharing @gb, the guest's CPUs on the first."""
    return (guest.NumaNode(gb // 2, "0"), guest.NumaNode(gb - gb // 2))


def _boot_two_nodes_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    return replace(_debian_boot_resized(sc, b), numa=_two_nodes(b.boot_gb))


# Under -icount (sleep=off) a halted vCPU's clock jumps to its next timer:
# a wait for the host (the guest's files are the host's, over 9p) took
# seconds of guest time, and the housekeeping of the timers met on the way
# added to its busy time. Polling in idle keeps the guest's clock at the
# pace of its instructions while the host answers; userwait.py leaves that
# idle time out.
USER_WAIT_IDLE = "idle=poll"


@dataclass(frozen=True)
class UserWait:
    """One of user-wait.sh's waits (its WAIT): what it times, at the test
    suite's size and at the bench's."""
    kind: str
    wait: Wait
    description: str                               # at the test's size
    metric: Callable[[BenchSizes], str]            # at the bench's
    resize: Callable[[Scenario, BenchSizes], Scenario]
    pmem_gb: int = 0
    virtio_mem_gb: int = 0
    env: dict[str, str] = field(default_factory=dict)

    def scenario(self) -> Scenario:
        """Its scenario, small, on Debian's config (`memlab test --full`),
        and its bench row at full size. One vCPU: the idle time the marks
        carry is the whole guest's."""
        return Scenario(
            name=f"wait-{self.kind}", script="user-wait",
            description=self.description + " (the wait marked on the kernel's clock)",
            memory_gb=3, pmem_gb=self.pmem_gb, virtio_mem_gb=self.virtio_mem_gb,
            env={"WAIT": self.kind, **self.env}, append=[USER_WAIT_IDLE], cpus=1,
            check=partial(check_user_wait, wait=self.wait), configs=(arches.DEBIAN_CONFIG,),
            bench=(BenchRow(f"wait-{self.kind}-debian", self.metric, self.resize,
                            NONE_POSTED, full_only=True, label=f"debian: {self.kind} wait",
                            config=arches.DEBIAN_CONFIG, wait=self.wait),))


# The memory used after each wait is the test's, not the row's: small.
USER_WAITS = (
    UserWait("daxctl-online", waits.ONLINING,
             "a 1 GB pmem region as devdax, added as system RAM offline, then "
             "`daxctl online-memory` until every block is online",
             lambda b: f"`daxctl online-memory` of dax kmem on a pmem region of "
                       f"{b.kmem_gb} GB until every block is online, Debian's config",
             lambda sc, b: sc.sized(4, b.kmem_gb, FILL_MIB="64"), pmem_gb=1),
    UserWait("create-namespace", waits.ZONE_DEVICE_BIND,
             "`ndctl create-namespace` of a 1 GB fsdax namespace (map=dev) until its "
             "block device is there",
             lambda b: f"`ndctl create-namespace` of fsdax (map=dev) on a pmem region of "
                       f"{b.pmem_gb} GB until its block device is there, Debian's config",
             lambda sc, b: sc.sized(4, b.pmem_gb), pmem_gb=1),
    UserWait("virtio-mem", waits.ONLINING,
             "a 1 GB virtio-mem device plugged from empty through QEMU's monitor until "
             "MemTotal shows it",
             lambda b: f"a virtio-mem device plugged from 0 to {b.kmem_gb} GB until "
                       "MemTotal shows it, Debian's config",
             lambda sc, b: replace(sc.sized(4, 0, PLUG_MIB=str(b.kmem_gb * 1024),
                                            FILL_MIB="64"), virtio_mem_gb=b.kmem_gb),
             virtio_mem_gb=1, env={"PLUG_MIB": "1024"}),
)


def _gigantic_resized(sc: Scenario, b: BenchSizes) -> Scenario:
    # virtme-ng's CPU: both kernels clear through the caches. icount counts
    # a REP STOSB byte as an instruction and a MOVNTI as one per 8 bytes,
    # so the streaming variant of the test's CPU would show a count the
    # emulator makes, not memory time (which `bench native` measures).
    return replace(sc.sized(sc.memory_gb, ROUNDS="3" if b.quick else "5"), cpu="")


# The fast-paths guest: TCG's CPU, asked to stream large clears with
# MOVNTI (checks.FAST_PATHS_CLEAR).
FAST_PATHS_CPUS = 2
FAST_PATHS = Scenario(
    name="fast-paths",
    script="fast-paths",
    description="the kernel's own reports of every memmap init's path (boot, deferred, "
                "a devdax bind, dax kmem blocks onlined) and of its large clear, with "
                "every fast path on; then the onlined memory used",
    memory_gb=3, pmem_gb=1, env={"SWITCH": "", "CPUS": str(FAST_PATHS_CPUS)},
    append=["mminit_loglevel=3", arches.TCG_CLEAR_STREAM], check=check_fast_paths,
    configs=(DEFER_CONFIG, arches.DEBIAN_CONFIG), cpu=arches.INTEL_TCG_CPU,
    cpus=FAST_PATHS_CPUS, tags_warn_on_base=True)


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
    memory_gb=4, env={"ROUNDS": "4"},
    append=["hugepagesz=1G", "hugepages=1", arches.TCG_CLEAR_STREAM],
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
                _rebinds_resized,
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
            check=check_kmem_online, configs=ALL_CONFIGS, tags_warn_on_base=True,
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
            tags_warn_on_base=True,
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
            configs=ConfigsWith("CONFIG_64BIT", unless="CONFIG_DEFERRED_STRUCT_PAGE_INIT"),
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
            memory_gb=3, env=BOOT_FILL, check=check_boot_deferred, configs=DEFERRING,
            bench=(BenchRow(
                "boot-deferred",
                lambda b: f"deferred init of a node's memory, {b.boot_gb} GB guest, "
                          "kernels of config defer",
                _boot_resized, NONE_POSTED, calls="deferred_inits",
                full_only=True, label="boot: deferred init", config=DEFER_CONFIG),
                   BenchRow(
                "boot-deferred-debian",
                lambda b: f"deferred init of a node's memory, {b.boot_gb} GB guest, "
                          "Debian's config (nokaslr)",
                _debian_boot_resized, NONE_POSTED, calls="deferred_inits",
                full_only=True, label="debian: boot deferred init", config=arches.DEBIAN_CONFIG),
                   BenchRow(
                "boot-memmap-free-debian",
                lambda b: f"memmap_init() and memblock_free_all() of boot memory, "
                          f"{b.boot_gb} GB guest, Debian's config (the rest deferred; "
                          "nokaslr)",
                _debian_boot_resized, NONE_POSTED, calls="boot_init_and_free",
                full_only=True, label="debian: boot memmap_init() + memblock_free_all()",
                config=arches.DEBIAN_CONFIG))),
        *(uw.scenario() for uw in USER_WAITS),
        Scenario(
            name="wait-boot",
            script="boot-memmap",
            description="boot of a two-node guest (its CPUs on the first) until the last "
                        "node's deferred init thread is done, on the kernel's clock",
            memory_gb=4, numa=_two_nodes(4), check=check_boot_two_nodes,
            configs=(arches.DEBIAN_CONFIG,),
            bench=(BenchRow(
                "wait-boot-debian",
                lambda b: f"boot of a two-node guest with {b.boot_gb} GB until the last "
                          "deferred init thread is done, Debian's config (nokaslr)",
                _boot_two_nodes_resized, NONE_POSTED, full_only=True,
                label="debian: boot wait", config=arches.DEBIAN_CONFIG, wait=waits.BOOT),)),
        Scenario(
            name="numa-pmem",
            script="numa-pmem",
            description="NUMA: two nodes with two CPUs each and one with memory only, "
                        "deferred init on each; a legacy pmem region on node 1 and one "
                        "on the memory-only node as fsdax map=dev, "
                        f"{REBINDS} rebinds each, data checksummed",
            memory_gb=4, pmem_gb=2, pmem_regions=2, cpus=2 * NUMA_NODE_CPUS, numa=NUMA_NODES,
            env={"ROUNDS": str(REBINDS)}, check=check_numa,
            configs=NUMA),
        Scenario(
            name="device-private",
            script="device-private",
            description=f"DEVICE_PRIVATE: test_hmm load/unload x{LOADS} "
                        "(2 x 256 MB memremap_pages each)",
            memory_gb=3, env={"LOADS": str(LOADS), "CHUNK_MB": str(HMM_CHUNK_BYTES >> 20),
                              "MODULE": "@out/lib/test_hmm.ko"},
            check=check_device_private, configs=HMM,
            bench=(BenchRow(
                "device-private", lambda b: f"memremap of {b.chunk_gb} GB DEVICE_PRIVATE",
                lambda sc, b: sc.sized(3 + 2 * b.chunk_gb // 64,
                                       LOADS="3" if b.quick else "10",
                                       CHUNK_MB=str(b.chunk_gb * 1024)), parallel=True,
                label="DEVICE_PRIVATE memremap"),)),
        Scenario(
            name="hmm-tests",
            script="hmm-tests",
            description="the kernel's hmm-tests selftest against test_hmm with two "
                        "DEVICE_PRIVATE and two DEVICE_COHERENT devices (on RAM the "
                        "command line reserves): every case must pass, the cases "
                        "that migrate THPs to a device on the private ones only",
            memory_gb=4,
            env={"MODULE": "@out/lib/test_hmm.ko", "HMM_TESTS": "@out/hmm-tests",
                 "SPM_ADDR0": hex(HMM_COHERENT_START),
                 "SPM_ADDR1": hex(HMM_COHERENT_START + HMM_CHUNK_BYTES),
                 "COHERENT_LEFT_OUT": " ".join(HMM_DEVICE_THP_CASES)},
            kasan_env={"SLOW_LEFT_OUT": " ".join(HMM_SLOW_CASES)},
            append=[f"memmap={2 * HMM_CHUNK_BYTES >> 20}M${HMM_COHERENT_START:#x}"],
            check=check_hmm_tests, configs=HMM, on_base=True, tags_warn_on_base=True),
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
                configs=HVO, on_base=False, bench=()),
        Scenario(
            name="virtio-mem",
            script="virtio-mem",
            description="a 2 GB virtio-mem device, empty at boot, resized through QEMU's "
                        f"monitor: {REBINDS} times 1 GB plugged, onlined movable, filled "
                        "from userspace and read back, then unplugged",
            memory_gb=3, virtio_mem_gb=2,
            env={"CYCLES": str(REBINDS), "PLUG_MIB": "1024"},
            check=check_virtio_mem, configs=VIRTIO_MEM, on_base=True,
            tags_warn_on_base=True),
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
            check=check_fault_inject, configs=FAULTS, tags_warn_on_base=True, timeout=3600),
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
        *(without(sw) for sw in switches.offered()),
        Scenario(
            name="runner-catches-warn",
            script="provoke-warn",
            description="LKDTM WARNING from a script that exits 0: the runner "
                        "must fail the run from the console alone",
            expect_failure="WARNING", configs=("lab", DEFER_CONFIG)),
    ]
}


def get(name: str) -> Scenario:
    if name not in SCENARIOS:
        raise LabError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    return SCENARIOS[name]


def bench_rows() -> dict[str, BenchRow]:
    """Every row `memlab bench` measures, by name, in table order."""
    return {row.name: row for sc in SCENARIOS.values() for row in sc.bench}
