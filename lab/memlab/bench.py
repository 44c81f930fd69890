"""`memlab bench`: base vs patched on the same scenarios, in the same run.

Each round boots base, then patched (alternating, so drift hits both), on
the same guest script. Timings come from the kernel itself: the lab patch's
nanosecond memmap_init_zone_device() line, and the hugetlb scenario's
allocation time. The rows are the scenarios' bench entries (catalog.py);
every sample is kept (results.py) and reported (report.py).
"""
from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from pathlib import Path

from . import (accel, arches, build, guest, hostinfo, kernel_base, kernel_tree, paths,
               provenance, report, results)
from .console import Console
from .runner import LabError, say
from .catalog import SCENARIOS, bench_rows
from .scenario import BenchRow, BenchSizes, Scenario
from .waits import Window


@dataclass(frozen=True)
class Variant:
    """A kernel as the bench boots it: a build and its command line."""
    name: str
    kernel: str                        # the build: base or patched
    append: tuple[str, ...] = ()


BASE = Variant(results.BASE, "base")
PATCHED = Variant(results.PATCHED, "patched")
# The patched kernel with each memmap range on one thread: what the series'
# parallel init gains is PATCHED against this, on the same kernel.
ONE_THREAD = Variant(results.ONE_THREAD, "patched", (results.ONE_THREAD_ARG,))


@dataclass
class BenchScenario:
    """A bench row and the test scenario it resized."""
    row: BenchRow
    scenario: Scenario
    metric: str

    @property
    def name(self) -> str:
        return self.row.name

    def variants(self, vcpus: int) -> list[Variant]:
        return [BASE, PATCHED] + ([ONE_THREAD] if self.row.parallel and vcpus > 1 else [])

    def samples(self, con: Console, windows: list[Window] | None = None) -> list[float]:
        """Microseconds per sample, from a parsed console (a wait's: its
        @windows on it, found again if not given)."""
        if self.row.wait:
            return [w.us for w in (self.windows(con) if windows is None else windows)]
        if self.row.result_ns:
            return [int(ns) / 1000.0 for ns in con.result_values(self.row.result_ns)]
        calls = getattr(con, self.row.calls)
        return [c.us for c in (calls[1:] if self.row.first_bind_apart else calls)]

    def windows(self, con: Console) -> list[Window]:
        """A wait's windows on a parsed console (none for other rows)."""
        return self.row.wait.windows(con) if self.row.wait else []

    def inside(self, con: Console, windows: list[Window]) -> list[float]:
        """A wait's samples: microseconds of each spent in the timed calls."""
        wait = self.row.wait
        return [wait.inside_us(con, w) for w in windows] if wait else []

    def pages(self, con: Console) -> set[int]:
        """The page counts of the timed calls (none for a script's result or
        a wait, whose sample is not one call)."""
        if self.row.result_ns or self.row.wait:
            return set()
        return {c.pages for c in getattr(con, self.row.calls)}

    def first_bind_us(self, con: Console) -> float | None:
        if self.row.first_bind_apart and con.memmap_inits:
            return con.memmap_inits[0].us
        return None


def scenarios(quick: bool, pmem_gb: int | None) -> list[BenchScenario]:
    """Every scenario's bench rows, resized for this host."""
    sizes = BenchSizes.for_host(quick, hostinfo.available_gb(), pmem_gb)
    return [BenchScenario(row, row.resize(sc, sizes), row.metric(sizes))
            for sc in SCENARIOS.values() for row in sc.bench
            if not (quick and row.full_only)]


TIMING = ("memmap_init_zone_device(): ktime_get_ns() around its call in pagemap_range(), "
          "printed by lab patch 0001 in base and patched alike; kmem: the same around "
          "memmap_init_range() in move_pfn_range_to_zone() and around online_pages() "
          "(lab patch 0003); boot: sched_clock() (the TSC) around memmap_init(), "
          "memblock_free_all() and each node's deferred init (lab patch 0004); hugetlb: "
          "the guest's perf_counter_ns() around each write() to nr_hugepages (a sample "
          "each); a user's wait: the guest kernel's clock between the script's marks in "
          "/dev/kmsg, less the time its one vCPU idled there (boot: from its zero to the "
          "end of the last deferred init thread), with the time the timed calls above ran "
          "inside it; udevd stopped before the timed work")


def default_mode(base_image: Path) -> str:
    """kvm where a probe boot of a built base kernel proves it works,
    else deterministic icount."""
    return "kvm" if accel.kvm_usable(base_image) else "icount"


@dataclass
class Measured:
    """One boot's timings."""
    samples: list[float]            # microseconds
    inside: list[float]             # a wait's: of each sample, in the timed calls
    idle: list[float]               # a wait's: of each sample's window, idle
    first_bind_us: float | None
    release: str                    # the kernel's uname -r
    log: Path
    pages: set[int]                 # pages per timed call


def measure(sc: BenchScenario, variant: Variant, mode: str) -> Measured:
    """One boot of a variant on a row's scenario, its checks applied."""
    spec = sc.scenario.spec(variant.kernel, sc.row.config, accel=guest.MODES[mode].name)
    spec.append += variant.append
    spec.timeout = 3600
    res = guest.boot_and_run(spec)
    problems = sc.scenario.verdict(res)
    if problems:
        raise LabError(f"bench {sc.name} on {variant.name} failed: "
                       + "; ".join(problems) + f" (log {res.log})")
    windows = sc.windows(res.console)
    xs = sc.samples(res.console, windows)
    if not xs:
        raise LabError(f"bench {sc.name} on {variant.name}: no timing found (log {res.log})")
    if min(xs) <= 0:
        # e.g. boot's sched_clock() before the TSC, where its calibration failed
        raise LabError(f"bench {sc.name} on {variant.name}: a timed call took 0 ns, its "
                       f"clock did not run (log {res.log})")
    return Measured(xs, sc.inside(res.console, windows),
                    [w.idle_us for w in windows if w.idle_us is not None],
                    sc.first_bind_us(res.console),
                    _kernel_release(res.log), res.log, sc.pages(res.console))


def results_dir(mode: str, quick: bool, only: list[str] | None,
                base: str | None = None) -> Path:
    """Where a run's results go: results/MODE[-quick] for all rows, with
    "-ROW+ROW..." for some, the rows in table order whatever the order they
    were asked for in; under results/BASE/ for a base other than the
    default (None: the base in use, paths.py)."""
    rows = [n for n in bench_rows() if n in set(only or ())]
    return paths.results_of(base) / (
        mode + ("-quick" if quick else "") + ("-" + "+".join(rows) if rows else ""))


@dataclass(frozen=True)
class CitedRun:
    """A run the documents cite: its mode, quick or not, its rows (None:
    every row of the mode), and its kernel base ("": the default)."""
    mode: str
    quick: bool
    rows: tuple[str, ...] | None = None
    base: str = ""


# The full-size hot-add and boot rows (deferred init has no quick row),
# and the same work on Debian's config: cited on both bases.
HOTPLUG_BOOT_ROWS = ("kmem-online", "kmem-online-pages", "boot-memmap", "boot-memmap-free",
                     "boot-deferred")
DEBIAN_ROWS = ("fsdax-rebind-debian", "kmem-memmap-on-memory-debian", "boot-deferred-debian",
               "boot-memmap-free-debian")
# A user's whole waits on Debian's config, end to end.
WAIT_ROWS = ("wait-daxctl-online-debian", "wait-create-namespace-debian",
             "wait-virtio-mem-debian", "wait-boot-debian")

# The cited runs, by the name their templates give them.
CITED_RUNS: dict[str, CitedRun] = {
    "icount": CitedRun("icount", False),
    "icount-quick": CitedRun("icount", True),
    "hotplug-boot": CitedRun("icount", False, HOTPLUG_BOOT_ROWS),
    "debian": CitedRun("icount", False, DEBIAN_ROWS),
    "waits": CitedRun("icount", False, WAIT_ROWS),
    "wall": CitedRun("wall", False),
    # Mainline: icount-quick's rows that its series changes (not the
    # clearing, which mainline has), to set beside the default base's.
    "mainline": CitedRun("icount", True, ("fsdax-rebind", "devdax-rebind", "kmem-online",
                                          "boot-memmap", "device-private"),
                          kernel_base.MAINLINE),
    "mainline-hotplug-boot": CitedRun("icount", False, HOTPLUG_BOOT_ROWS, kernel_base.MAINLINE),
    "mainline-debian": CitedRun("icount", False, DEBIAN_ROWS, kernel_base.MAINLINE),
}


def cited_dir(name: str) -> Path:
    """The results directory of the run the documents call @name."""
    if name not in CITED_RUNS:
        raise LabError(f"no cited bench run {name!r} (known: {', '.join(CITED_RUNS)})")
    run = CITED_RUNS[name]
    return results_dir(run.mode, run.quick, list(run.rows) if run.rows else None, run.base)


def command(mode: str, quick: bool, rows: list[str], base: str = "") -> str:
    """The command that remakes a run's results (results_dir())."""
    words = ([f"MEMLAB_BASE={base}"] if base else []) + ["memlab bench", f"--mode {mode}"]
    words += ["--quick"] if quick else []
    return " ".join(words + [f"--scenario {r}" for r in rows])


def choose(quick: bool, only: list[str] | None, pmem_gb: int | None) -> list[BenchScenario]:
    chosen = scenarios(quick, pmem_gb)
    if only:
        unknown = set(only) - {s.name for s in chosen}
        if unknown:
            full_only = sorted(n for n in unknown if n in bench_rows() and quick)
            raise LabError(f"bench scenario(s) {', '.join(sorted(unknown))}: "
                           + (f"{', '.join(full_only)} not measured with --quick; "
                              if full_only else "")
                           + f"known: {', '.join(s.name for s in chosen)}")
        chosen = [s for s in chosen if s.name in only]
    return chosen


def run(mode: str | None = None, quick: bool = False, rounds: int | None = None,
        only: list[str] | None = None, pmem_gb: int | None = None) -> int:
    chosen = choose(quick, only, pmem_gb)
    if not kernel_tree.has_tree():
        kernel_tree.source()
    configs = sorted({sc.row.config for sc in chosen})
    for config in configs:
        for kernel in ("base", "patched"):
            guest.build_kernel(kernel, config)
    # The KVM probe boots a base kernel: only now is there one to boot.
    probe_image = arches.image_path(arches.GUEST_ARCH, "base", configs[0])
    mode = mode or default_mode(probe_image)
    if mode == "kvm" and not accel.kvm_usable(probe_image):
        raise LabError("--mode kvm: the KVM probe boot failed on this host")
    how = guest.MODES[mode]
    # icount is deterministic: one round per kernel, a second to prove it.
    rounds = rounds or (2 if mode == "icount" else 5)
    vcpus = guest.vcpus(guest.GuestSpec(accel=how.name))
    rows: dict[str, results.Row] = {}
    pages: dict[str, dict[str, set[int]]] = {}
    kernels: dict[str, str] = {}
    start = time.monotonic()
    for sc in chosen:
        variants = sc.variants(vcpus)
        row = rows[sc.name] = results.Row(
            metric=sc.metric, memory_gb=sc.scenario.memory_gb, pmem_gb=sc.scenario.pmem_gb,
            env=sc.scenario.environment(sc.row.config),
            append=sc.scenario.command_line(sc.row.config),
            samples={v.name: [] for v in variants},
            inside_us={v.name: [] for v in variants} if sc.row.wait else {},
            idle_us={v.name: [] for v in variants} if sc.row.wait else {},
            first_bind_us={v.name: [] for v in variants},
            first_bind_apart=sc.row.first_bind_apart, config=sc.row.config)
        pages[sc.name] = {v.name: set() for v in variants}
        for r in range(rounds):
            for variant in variants:
                say(f"bench {sc.name}: round {r + 1}/{rounds}, {variant.name} "
                    f"({time.monotonic() - start:.0f}s elapsed)")
                m = measure(sc, variant, mode)
                row.samples[variant.name] += m.samples
                if sc.row.wait:
                    row.inside_us[variant.name] += m.inside
                    row.idle_us[variant.name] += m.idle
                pages[sc.name][variant.name] |= m.pages
                if m.first_bind_us is not None:
                    row.first_bind_us[variant.name].append(m.first_bind_us)
                kernels[variant.kernel] = m.release
                row.logs.append(str(m.log))
        row.pages_per_call = sorted(set().union(*pages[sc.name].values()))
    result = results.Result(
        mode=mode, label=how.label, quick=quick, rounds=rounds, guest_vcpus=vcpus,
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), host_cpu=hostinfo.cpu_model(),
        host=platform.node(), kernels=kernels, timing=TIMING, rows=rows,
        elapsed_s=round(time.monotonic() - start),
        provenance=provenance.now(provenance.guest_kernels(configs)).to_json())
    if mode == "icount" and rounds >= 2:
        result.repeatability = results.repeatability(
            {**{n: r.samples for n, r in rows.items()},
             **{f"{n} (first bind)": r.first_bind_us for n, r in rows.items()
                if any(r.first_bind_us.values())}}, rounds)
    # latest.* is the last run; results_dir() keeps the last of each kind,
    # so that a run of some rows leaves the full table alone.
    outdir = results_dir(mode, quick, only)
    report.write_bench(result, outdir)
    say(f"results: {outdir}/bench.md (also results/latest.md), plots in {outdir}; "
        f"bench took {time.monotonic() - start:.0f}s")
    if result.repeatability is not None and not result.repeatable:
        raise LabError("icount results are not repeatable within "
                       f"{100 * results.REPEATABLE:.0f}%: "
                       + ", ".join(results.unrepeatable_rows(result.repeatability)))
    mismatched = results.unequal_page_counts(pages)
    if mismatched:
        raise LabError("the kernels' timed calls covered different page counts: "
                       + "; ".join(mismatched))
    return 0


def _kernel_release(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if "Linux version " in line:
            return line.split("Linux version ", 1)[1].split()[0]
    return "?"
