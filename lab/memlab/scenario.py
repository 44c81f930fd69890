"""A guest scenario as the lab runs it: the machine it boots, its script
(scenarios/NAME.sh) and environment, the configs it runs on, its verdict
on a run, and what the bench measures on it. The scenarios themselves are
catalog.py's; their verdicts checks.py's."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from . import arches, guest, kconfig, paths, postings
from .console import Console
from .postings import Reference
from .waits import Wait

# What a bench row says where no posting measured what it measures.
NONE_POSTED = "none posted"
# Those that check every page's allocation tag (MEM_ALLOC_PROFILING_DEBUG)
# boot a scenario whose work the base kernel's checks warn on with the
# profiling off (Scenario.tags_warn_on_base).
PROFILING_OFF = "sysctl.vm.mem_profiling=0"


@dataclass(frozen=True)
class ConfigsWith:
    """The configs the test suite boots on the guests' architecture whose
    fragment builds @option in, but for those that also build @unless:
    read from configs/ when asked, not when the lab is imported."""
    option: str
    unless: str = ""

    def names(self) -> tuple[str, ...]:
        every = arches.guest().test_configs
        names = kconfig.configs_with(every, self.option)
        if self.unless:
            names = tuple(c for c in names if c not in kconfig.configs_with(every, self.unless))
        return names


TAG_CHECKING = ConfigsWith("CONFIG_MEM_ALLOC_PROFILING_DEBUG")
KASAN = ConfigsWith("CONFIG_KASAN")


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
    # Why no posting measured it, where none did (postings.py has the rest).
    no_posting: str = NONE_POSTED
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
    # A user's whole wait (waits.py): each sample is its window on the
    # guest kernel's clock, with the timed calls' share of it.
    wait: Wait | None = None

    @property
    def reference(self) -> Reference | str:
        """The posted figure printed beside this row, or why there is none."""
        return postings.figure(self.name) or self.no_posting


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
    # Configs the test suite runs it on (on their patched kernels): named,
    # or those that build an option (resolved when asked: runs_on()).
    configs: tuple[str, ...] | ConfigsWith = ("lab",)
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
    # The base kernel's allocation tag checks warn on what it does, on base
    # and patched alike: 6.12.117 as onlining frees the first hot-added page
    # (dax kmem, virtio-mem), 7.2 as test_hmm frees the pieces of a split
    # device-private THP (docs/testing.md). It boots the kernels that check
    # (TAG_CHECKING) with the profiling off.
    tags_warn_on_base: bool = False
    # What its environment adds on the kernels built with KASAN.
    kasan_env: dict[str, str] = field(default_factory=dict)
    timeout: int = guest.GuestSpec.timeout
    # Both kernels' runs (config, base, patched) weighed together, for a
    # scenario on_base: problems.
    compare: Callable[[str, Console, Console], list[str]] | None = None

    def spec(self, variant: str, config: str = "lab", accel: str = "tcg") -> guest.GuestSpec:
        return guest.GuestSpec(variant=variant, config=config, script=self.script,
                               memory_gb=self.memory_gb, pmem_gb=self.pmem_gb,
                               pmem_regions=self.pmem_regions,
                               accel=accel,
                               env=resolve_env(self.environment(config), variant, config),
                               append=self.command_line(config), cpu=self.cpu, cpus=self.cpus,
                               numa=self.numa, virtio_mem_gb=self.virtio_mem_gb,
                               timeout=self.timeout)

    def runs_on(self) -> tuple[str, ...]:
        """The configs the test suite runs it on."""
        return self.configs.names() if isinstance(self.configs, ConfigsWith) else self.configs

    def command_line(self, config: str) -> list[str]:
        """What the guest's kernel command line adds on @config."""
        if self.tags_warn_on_base and config in TAG_CHECKING.names():
            return [*self.append, PROFILING_OFF]
        return list(self.append)

    def environment(self, config: str) -> dict[str, str]:
        """Its script's environment on @config."""
        if self.kasan_env and config in KASAN.names():
            return {**self.env, **self.kasan_env}
        return dict(self.env)

    def problems(self, con: Console, config: str = "lab") -> list[str]:
        done = [] if con.result("done") == "1" else ["scenario did not report done=1"]
        return done + self.check(con, self.environment(config))

    def judge_console(self, con: Console, config: str = "lab") -> list[str]:
        """The verdict on a console alone (a saved log: no exit code) of a
        run on @config."""
        if self.expect_failure:
            kinds = [f.kind for f in con.failures]
            return [] if self.expect_failure in kinds else \
                [f"expected a {self.expect_failure} report on the console, saw {kinds or 'none'}"]
        return [str(f) for f in con.failures] + self.problems(con, config)

    def verdict(self, result: guest.GuestResult) -> list[str]:
        """Problems with a run of this scenario (empty: passed): the
        console's reports and the script's exit, then its own checks; for a
        runner self-test, whether the expected report came."""
        if self.expect_failure:
            return self.judge_console(result.console, result.spec.config)
        return result.problems() + self.problems(result.console, result.spec.config)

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
