"""`memlab bench`: base vs patched on the same scenarios, in the same run.

Each round boots base, then patched (alternating, so drift hits both), on
the same guest script. Timings come from the kernel itself: the lab patch's
nanosecond memmap_init_zone_device() line, and the hugetlb scenario's
allocation time. Every sample is kept in results/latest.json.
"""
from __future__ import annotations

import json
import platform
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import build, deps, guest, kernel_tree, paths
from .runner import LabError, say
from .scenarios import SCENARIOS, Scenario

# Numbers of the reference postings (shared/reference/README.md), to print
# beside ours. They are real hardware (VM on Ice Lake), 100 GB namespaces.
REFERENCE = {
    "fsdax-rebind": "nd_pmem 100 GB rebind: 244.28 -> 96.79 ms (0.396)",
    "devdax-rebind": "dax_pmem 100 GB align=2M rebind: 273.31 -> 119.04 ms (0.436)",
    "device-private": "64 GB memremap: 116.7 -> 54.6 ms (0.468)",
    "hugetlb-init-on-alloc": "16 GB of 2 MB hugetlb, init_on_alloc=1: 0.445 -> 0.166 s (0.373)",
    "kmem-online": "none posted (asked for in review, never sent)",
    "boot-memmap": "none posted",
}


@dataclass(frozen=True)
class Variant:
    """A kernel as the bench boots it: a build and its command line."""
    name: str
    kernel: str                        # the build: base or patched
    append: tuple[str, ...] = ()


BASE = Variant("base", "base")
PATCHED = Variant("patched", "patched")
# The patched kernel with each memmap range on one thread: what the series'
# parallel init gains is PATCHED against this, on the same kernel.
ONE_THREAD = Variant("patched-1thread", "patched",
                     ("mm_init.zone_device_init_threads=1",))


@dataclass
class BenchScenario:
    """A test scenario (scenarios.SCENARIOS), resized for measuring: the
    bench applies the same checks to every run it times."""
    name: str
    scenario: Scenario
    metric: str            # what one sample is
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

    def variants(self, vcpus: int) -> list[Variant]:
        return [BASE, PATCHED] + ([ONE_THREAD] if self.parallel and vcpus > 1 else [])

    def samples(self, con: guest.console.Console) -> list[float]:
        """Microseconds per sample, from a parsed console."""
        if self.result_ns:
            return [int(ns) / 1000.0 for ns in con.result_values(self.result_ns)]
        calls = getattr(con, self.calls)
        return [c.us for c in (calls[1:] if self.first_bind_apart else calls)]

    def pages(self, con: guest.console.Console) -> set[int]:
        """The page counts of the timed calls (none for a script's result)."""
        return set() if self.result_ns else {c.pages for c in getattr(con, self.calls)}

    def first_bind_us(self, con: guest.console.Console) -> float | None:
        if self.first_bind_apart and con.memmap_inits:
            return con.memmap_inits[0].us
        return None


def scenarios(quick: bool, pmem_gb: int | None) -> list[BenchScenario]:
    avail = int(guest.host_available_gb())
    # Largest pmem region that fits beside 4 GB of guest RAM, up to 16 GB.
    pmem = pmem_gb or (4 if quick else max(4, min(16, avail - 6)))
    rebinds = "5" if quick else "30"
    hugepages = 128 if quick else min(8192, max(512, (avail - 6) * 512))
    # hugetlb: at most 1 GB dirtied before the timed allocation, not all of
    # it (the test scenario dirties all): dirtying 16 GB under TCG costs
    # more than the allocation and does not change what init_on_alloc zeroes.
    dirty_mib = min(1024, hugepages * 2)
    # DEVICE_PRIVATE: one chunk per test_hmm device (two devices); a 64 GB
    # chunk (the postings' size) has a 1 GB memmap in guest RAM.
    chunk_gb = 1 if quick else (64 if avail >= 12 else 16)
    # dax kmem: every 128 MB block onlined 1 + CYCLES times, a sample each.
    kmem_gb = 1 if quick else max(1, min(8, avail - 6))
    # Boot: as much RAM as the host can give a guest.
    boot_gb = 3 if quick else max(4, int(avail) - 4)
    kmem = SCENARIOS["kmem-online"].sized(
        3, kmem_gb, CYCLES="3" if quick else "5", FILL_MIB="256")
    known = SCENARIOS
    return [
        BenchScenario("fsdax-rebind", known["fsdax-dev"].sized(
            4, pmem, REBINDS=rebinds, DATA_MIB="4"),
            f"memmap init per rebind, {pmem} GB fsdax map=dev", first_bind_apart=True,
            parallel=True),
        BenchScenario("devdax-rebind", known["devdax-2m"].sized(
            4, pmem, REBINDS=rebinds, DATA_MIB="4"),
            f"memmap init per rebind, {pmem} GB devdax align=2M", first_bind_apart=True,
            parallel=True),
        BenchScenario("device-private", known["device-private"].sized(
            3 + 2 * chunk_gb // 64, LOADS="3" if quick else "10",
            CHUNK_MB=str(chunk_gb * 1024)),
            f"memremap of {chunk_gb} GB DEVICE_PRIVATE", parallel=True),
        BenchScenario("hugetlb-init-on-alloc", known["hugetlb-init-on-alloc"].sized(
            3 + hugepages * 2 // 1024, HUGEPAGES=str(hugepages),
            ALLOCS="3" if quick else "5", THP_MIB="16",
            CHECK_MIB="64" if quick else "256", DIRTY_MIB=str(dirty_mib)),
            f"allocate {hugepages} x 2 MB hugetlb, init_on_alloc=1",
            result_ns="hugetlb_alloc_ns"),
        BenchScenario("kmem-online", kmem,
                      f"memmap init per onlined memory block, {kmem_gb} GB dax kmem",
                      calls="hotplug_inits"),
        BenchScenario("boot-memmap", known["boot-memmap"].sized(boot_gb),
                      f"memmap_init() of boot memory, {boot_gb} GB guest",
                      calls="boot_inits"),
    ] + ([] if quick else [
        BenchScenario("kmem-online-pages", kmem,
                      f"online_pages() per memory block, {kmem_gb} GB dax kmem",
                      calls="onlines")])


@dataclass
class Stats:
    n: int
    median: float
    mean: float
    minimum: float
    maximum: float

    @staticmethod
    def of(xs: list[float]) -> "Stats | None":
        if not xs:
            return None
        return Stats(len(xs), statistics.median(xs), statistics.fmean(xs), min(xs), max(xs))


def variant_stats(by_variant: dict[str, list[float]]) -> dict[str, dict | None]:
    """Stats of each variant's samples, as JSON-ready dicts."""
    return {v: (asdict(st) if (st := Stats.of(xs)) else None)
            for v, xs in by_variant.items()}


TIMING = ("memmap_init_zone_device(): ktime_get_ns() around its call in pagemap_range(), "
          "printed by lab patch 0001 in base and patched alike; kmem: the same around "
          "memmap_init_range() in move_pfn_range_to_zone() and around online_pages() "
          "(lab patch 0003); boot: sched_clock() (the TSC) around memmap_init() "
          "(lab patch 0004); hugetlb: the guest's perf_counter_ns() around each write() "
          "to nr_hugepages (a sample each); udevd stopped before the timed work")

# Under -icount two boots of one kernel must agree within this.
REPEATABLE = 0.01
MODE_LABELS = {"icount": "emulated: QEMU TCG -icount shift=0, guest time = instructions",
               "wall": "emulated: QEMU TCG wall clock", "kvm": "KVM, real time"}
# The guests' accelerator in each mode: the table's label holds for them.
MODE_ACCELS = {"icount": "tcg-icount", "wall": "tcg", "kvm": "kvm"}


def _row(name: str, metric: str, stats: dict, reference: str) -> str:
    b, p = stats.get("base"), stats.get("patched")
    ratio = f"{p['median'] / b['median']:.3f}" if b and p and b["median"] else "n/a"

    def cell(s: dict | None) -> str:
        return f"{s['median']:.1f}" if s else "n/a"

    def span(s: dict | None) -> str:
        return f"{s['minimum']:.1f}-{s['maximum']:.1f}" if s else "n/a"
    n = f"{b['n'] if b else 0}/{p['n'] if p else 0}"
    return (f"| {name} | {metric} | {cell(b)} | {cell(p)} | {ratio} | {span(b)} | "
            f"{span(p)} | {n} | {reference} |")


def _parallel_row(name: str, stats: dict) -> str | None:
    one, all_, base = (stats.get(v.name) for v in (ONE_THREAD, PATCHED, BASE))
    if not one:
        return None
    if not all_ or not base:
        return f"| {name} | {one['median']:.1f} | n/a | n/a | n/a | | | |"
    ratio = f"{all_['median'] / one['median']:.3f}" if one["median"] else "n/a"
    return (f"| {name} | {one['median']:.1f} | {all_['median']:.1f} | {ratio} | "
            f"{base['median']:.1f} | {one['minimum']:.1f}-{one['maximum']:.1f} | "
            f"{all_['minimum']:.1f}-{all_['maximum']:.1f} | {one['n']}/{all_['n']} |")


def parallel_markdown(result: dict) -> list[str]:
    """The patched kernel on one thread per range vs on all vCPUs."""
    vcpus = result.get("guest_vcpus", 1)
    if vcpus < 2:
        return ["", f"Parallel memmap init: not measured in this mode. The guests have "
                f"{vcpus} vCPU; under -icount all vCPUs share one instruction clock, so "
                "a parallel gain cannot show here (see `memlab bench --mode wall`)."]
    rows = [r for name, row in result["scenarios"].items()
            if (r := _parallel_row(name, row["stats"]))]
    if not rows:
        return []
    return ["", f"Parallel memmap init, patched kernel, {vcpus} vCPUs: each range on one "
            f"thread (`{' '.join(ONE_THREAD.append)}`) vs shared among all vCPUs "
            "(the default), and base:", "",
            "| scenario | one thread median (us) | all vCPUs median (us) | all/one | "
            "base median (us) | one min-max | all min-max | n |",
            "|---|---:|---:|---:|---:|---|---|---:|", *rows]


def markdown(result: dict) -> str:
    mode = result["mode"]
    lines = [f"### memlab bench ({mode}: {MODE_LABELS[mode]})", "",
             f"{result['date']}, host {result['host_cpu']}, "
             f"{result.get('guest_vcpus', '?')} vCPU guests, kernels "
             f"{result['kernels'].get('base', '?')} (base) / "
             f"{result['kernels'].get('patched', '?')} (patched)"
             + (", quick sizes" if result.get("quick") else "")
             + (f", {result['rounds']} alternating boots per kernel, "
                f"bench took {result['elapsed_s']} s" if "elapsed_s" in result else ""),
             "", f"Timing: {result['timing']}." if "timing" in result else "", "",
             "| scenario | metric | base median (us) | patched median (us) | "
             "patched/base | base min-max | patched min-max | n | reference posting |",
             "|---|---|---:|---:|---:|---|---|---:|---|"]
    for name, row in result["scenarios"].items():
        lines.append(_row(name, row["metric"], row["stats"], REFERENCE.get(name, "")))
        if row.get("first_bind_stats"):
            lines.append(_row(f"{name} (first bind)", "memmap init of the first bind",
                              row["first_bind_stats"], ""))
    rep = result.get("repeatability")
    if rep:
        lines += ["", f"Repeatability (medians of each round, must agree within "
                  f"{100 * REPEATABLE:.0f}%):"]
        lines += [f"- {key}: {', '.join(f'{m:.1f}' for m in r['round_medians'])} us, "
                  f"spread {100 * r['spread']:.2f}%" for key, r in rep.items()]
    lines += per_page_markdown(result)
    lines += parallel_markdown(result)
    return "\n".join(lines) + "\n"


def per_page_markdown(result: dict) -> list[str]:
    """Under -icount a nanosecond is an instruction: the medians per struct
    page, for rows whose timed calls all cover the same number of pages."""
    if result["mode"] != "icount":
        return []
    rows = []
    for name, row in result["scenarios"].items():
        counts, stats = row.get("pages_per_call", []), row["stats"]
        b, p = stats.get("base"), stats.get("patched")
        if len(counts) == 1 and counts[0] and b and p:
            rows.append(f"| {name} | {counts[0]} | {1000 * b['median'] / counts[0]:.1f} | "
                        f"{1000 * p['median'] / counts[0]:.1f} |")
    if not rows:
        return []
    return ["", "Instructions per struct page (icount: 1 ns = 1 instruction), medians:", "",
            "| scenario | pages per call | base | patched |", "|---|---:|---:|---:|", *rows]


def default_mode() -> str:
    """kvm where a probe boot of the built base kernel proves it works,
    else deterministic icount."""
    return "kvm" if guest.kvm_usable(_image("base")) else "icount"


def measure(sc: BenchScenario, variant: Variant,
            mode: str) -> tuple[list[float], float | None, str, str, set[int]]:
    """One boot: samples (us), first bind (us), kernel release, log path,
    pages per timed call."""
    spec = sc.scenario.spec(variant.kernel, accel=MODE_ACCELS[mode])
    spec.append += variant.append
    spec.timeout = 3600
    res = guest.boot_and_run(spec)
    problems = res.problems() + sc.scenario.problems(res.console)
    if problems:
        raise LabError(f"bench {sc.name} on {variant} failed: "
                       + "; ".join(problems) + f" (log {res.log})")
    xs = sc.samples(res.console)
    if not xs:
        raise LabError(f"bench {sc.name} on {variant}: no timing found (log {res.log})")
    if min(xs) <= 0:
        # e.g. boot's sched_clock() before the TSC, where its calibration failed
        raise LabError(f"bench {sc.name} on {variant}: a timed call took 0 ns, its clock "
                       f"did not run (log {res.log})")
    return (xs, sc.first_bind_us(res.console), _kernel_release(res.log), str(res.log),
            sc.pages(res.console))


def run(mode: str | None = None, quick: bool = False, rounds: int | None = None,
        only: list[str] | None = None, pmem_gb: int | None = None) -> int:
    if not kernel_tree.has_tree():
        kernel_tree.source()
    chosen = scenarios(quick, pmem_gb)
    if only:
        unknown = set(only) - {s.name for s in chosen}
        if unknown:
            raise LabError(f"unknown bench scenario(s) {', '.join(sorted(unknown))} "
                           f"(known: {', '.join(s.name for s in chosen)})")
        chosen = [s for s in chosen if s.name in only]
    for variant in ("base", "patched"):
        build.build(variant, "lab")
    # The KVM probe boots the base kernel: only now is there one to boot.
    mode = mode or default_mode()
    if mode == "kvm" and not guest.kvm_usable(_image("base")):
        raise LabError("--mode kvm: the KVM probe boot failed on this host")
    # icount is deterministic: one round per kernel, a second to prove it.
    rounds = rounds or (2 if mode == "icount" else 5)
    vcpus = guest.vcpus(guest.GuestSpec(accel=MODE_ACCELS[mode]))
    samples: dict[str, dict[str, list[float]]] = {}
    first: dict[str, dict[str, list[float]]] = {}
    logs: dict[str, list[str]] = {}
    pages: dict[str, dict[str, set[int]]] = {}
    kernels: dict[str, str] = {}
    start = time.monotonic()
    for sc in chosen:
        variants = sc.variants(vcpus)
        samples[sc.name] = {v.name: [] for v in variants}
        first[sc.name] = {v.name: [] for v in variants}
        logs[sc.name] = []
        pages[sc.name] = {v.name: set() for v in variants}
        for r in range(rounds):
            for variant in variants:
                say(f"bench {sc.name}: round {r + 1}/{rounds}, {variant.name} "
                    f"({time.monotonic() - start:.0f}s elapsed)")
                xs, fb, release, log, call_pages = measure(sc, variant, mode)
                samples[sc.name][variant.name] += xs
                pages[sc.name][variant.name] |= call_pages
                if fb is not None:
                    first[sc.name][variant.name].append(fb)
                kernels[variant.kernel] = release
                logs[sc.name].append(log)
    result = {
        "mode": mode, "label": MODE_LABELS[mode], "quick": quick, "rounds": rounds,
        "guest_vcpus": vcpus,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "elapsed_s": round(time.monotonic() - start),
        "host_cpu": host_cpu(), "host": platform.node(),
        "kernels": kernels,
        "timing": TIMING,
        "scenarios": {
            sc.name: {
                "metric": sc.metric, "unit": "us", "memory_gb": sc.scenario.memory_gb,
                "pmem_gb": sc.scenario.pmem_gb,
                "env": sc.scenario.env, "append": sc.scenario.append,
                "samples": samples[sc.name], "first_bind_us": first[sc.name],
                "pages_per_call": sorted(set().union(*pages[sc.name].values())),
                "stats": variant_stats(samples[sc.name]),
                "first_bind_stats": variant_stats(first[sc.name]) if sc.first_bind_apart
                else None,
                "logs": logs[sc.name],
            } for sc in chosen},
    }
    unrepeatable: list[str] = []
    if mode == "icount" and rounds >= 2:
        result["repeatability"] = repeatability(
            {**samples, **{f"{k} (first bind)": v for k, v in first.items() if any(v.values())}},
            rounds)
        unrepeatable = unrepeatable_rows(result["repeatability"])
        result["repeatable"] = not unrepeatable
    table = markdown(result)
    # latest.* is the last run; <mode>[-quick][-scenarios]/ keeps the last of
    # each kind, so that a run of some scenarios leaves the full table alone.
    outdir = paths.RESULTS / (mode + ("-quick" if quick else "")
                              + ("-" + "+".join(only) if only else ""))
    outdir.mkdir(parents=True, exist_ok=True)
    for stem in (paths.RESULTS / "latest", outdir / "bench"):
        stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
        stem.with_suffix(".md").write_text(table)
    print(table)
    write_plots(outdir / "bench.json", outdir)
    say(f"results: {outdir}/bench.md (also results/latest.md), plots in {outdir}; "
        f"bench took {time.monotonic() - start:.0f}s")
    if unrepeatable:
        raise LabError("icount results are not repeatable within "
                       f"{100 * REPEATABLE:.0f}%: " + ", ".join(unrepeatable))
    mismatched = unequal_page_counts(pages)
    if mismatched:
        raise LabError("the kernels' timed calls covered different page counts: "
                       + "; ".join(mismatched))
    return 0


def unequal_page_counts(pages: dict[str, dict[str, set[int]]]) -> list[str]:
    """Scenarios whose kernels initialized different numbers of struct pages
    per timed call: they did not do the same work, whatever their times."""
    return [f"{name}: " + ", ".join(f"{v} {sorted(counts)}" for v, counts in by_variant.items())
            for name, by_variant in pages.items()
            if len({frozenset(counts) for counts in by_variant.values()}) > 1]


def write_plots(result_json: Path, outdir: Path) -> list[Path]:
    """PNG box plots per scenario, drawn by the venv's python (matplotlib)."""
    env = deps.venv_env()
    env["PYTHONPATH"] = str(paths.REPO / "lab")
    res = subprocess.run([str(paths.VENV / "bin" / "python3"), "-m", "memlab.plot",
                          str(result_json), str(outdir)],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise LabError(f"plotting failed:\n{res.stdout}{res.stderr}")
    return [Path(p) for p in res.stdout.split()]


def repeatability(samples: dict[str, dict[str, list[float]]],
                  rounds: int) -> dict[str, dict]:
    """Per row and variant: the median of each round (one boot each) and
    their largest relative spread, (max - min) / min."""
    out = {}
    for name, by_variant in samples.items():
        for variant, xs in by_variant.items():
            if rounds < 2 or len(xs) < rounds:
                continue
            per = len(xs) // rounds
            medians = [statistics.median(xs[i * per:(i + 1) * per]) for i in range(rounds)]
            spread = (max(medians) - min(medians)) / min(medians) if min(medians) else 0.0
            out[f"{name}/{variant}"] = {"round_medians": medians, "spread": spread}
    return out


def unrepeatable_rows(rep: dict[str, dict]) -> list[str]:
    """Rows whose rounds disagree by more than REPEATABLE."""
    return [f"{k} spread {100 * r['spread']:.2f}%" for k, r in rep.items()
            if r["spread"] > REPEATABLE]


def _image(variant: str) -> Path:
    return guest.built_image(guest.GuestSpec(variant=variant, config="lab"))


def _kernel_release(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if "Linux version " in line:
            return line.split("Linux version ", 1)[1].split()[0]
    return "?"


def host_cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"
