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
from .scenarios import resolve_env

# Numbers of the reference postings (shared/reference/README.md), to print
# beside ours. They are real hardware (VM on Ice Lake), 100 GB namespaces.
REFERENCE = {
    "fsdax-rebind": "nd_pmem 100 GB rebind: 244.28 -> 96.79 ms (0.396)",
    "devdax-rebind": "dax_pmem 100 GB align=2M rebind: 273.31 -> 119.04 ms (0.436)",
    "device-private": "64 GB memremap: 116.7 -> 54.6 ms (0.468)",
    "hugetlb-init-on-alloc": "16 GB of 2 MB hugetlb, init_on_alloc=1: 0.445 -> 0.166 s (0.373)",
}


@dataclass
class BenchScenario:
    name: str
    script: str
    metric: str            # what one sample is
    memory_gb: int
    pmem_gb: int = 0
    env: dict[str, str] = field(default_factory=dict)
    append: list[str] = field(default_factory=list)

    def samples(self, con: guest.console.Console) -> list[float]:
        """Microseconds per sample, from a parsed console."""
        if self.name == "hugetlb-init-on-alloc":
            ns = con.result("hugetlb_alloc_ns")
            return [int(ns) / 1000.0] if ns else []
        inits = con.memmap_inits
        if self.name in ("fsdax-rebind", "devdax-rebind"):
            inits = inits[1:]          # the first bind is reported apart
        return [i.us for i in inits]

    def first_bind_us(self, con: guest.console.Console) -> float | None:
        if self.name in ("fsdax-rebind", "devdax-rebind") and con.memmap_inits:
            return con.memmap_inits[0].us
        return None


def scenarios(quick: bool, pmem_gb: int | None) -> list[BenchScenario]:
    avail = int(guest.host_available_gb())
    # Largest pmem region that fits beside 4 GB of guest RAM, up to 16 GB.
    pmem = pmem_gb or (4 if quick else max(4, min(16, avail - 6)))
    rebinds = "5" if quick else "30"
    hugepages = 512 if quick else min(8192, max(512, (avail - 6) * 512))
    return [
        BenchScenario("fsdax-rebind", "fsdax-rebind", "memmap init per rebind",
                      memory_gb=4, pmem_gb=pmem,
                      env={"REBINDS": rebinds, "MAP": "dev", "DATA_MIB": "4"}),
        BenchScenario("devdax-rebind", "devdax-rebind", "memmap init per rebind",
                      memory_gb=4, pmem_gb=pmem,
                      env={"REBINDS": rebinds, "ALIGN": "2M", "DATA_MIB": "4"}),
        BenchScenario("device-private", "device-private", "memremap of 256 MB",
                      memory_gb=3, env={"LOADS": "3" if quick else "10",
                                        "MODULE": "@out/lib/test_hmm.ko"}),
        BenchScenario("hugetlb-init-on-alloc", "hugetlb-zero",
                      f"allocate {hugepages} x 2 MB hugetlb",
                      memory_gb=3 + hugepages * 2 // 1024,
                      env={"HUGEPAGES": str(hugepages), "THP_MIB": "16",
                           "CHECK_MIB": "256"},
                      append=["init_on_alloc=1"]),
    ]


@dataclass
class Stats:
    n: int
    median: float
    minimum: float
    maximum: float

    @staticmethod
    def of(xs: list[float]) -> "Stats | None":
        if not xs:
            return None
        return Stats(len(xs), statistics.median(xs), min(xs), max(xs))


def summarize(samples: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, Stats | None]]:
    return {sc: {v: Stats.of(xs) for v, xs in by_variant.items()}
            for sc, by_variant in samples.items()}


def markdown(result: dict) -> str:
    mode = result["mode"]
    label = {"icount": "emulated: QEMU TCG -icount shift=0, guest time = instructions",
             "wall": "emulated: QEMU TCG wall clock", "kvm": "KVM, real time"}[mode]
    lines = [f"### memlab bench ({mode}: {label})", "",
             f"{result['date']}, host {result['host_cpu']}, kernels "
             f"{result['kernels'].get('base', '?')} (base) / "
             f"{result['kernels'].get('patched', '?')} (patched)", "",
             "| scenario | metric | base median (us) | patched median (us) | "
             "patched/base | base min-max | patched min-max | n | reference posting |",
             "|---|---|---:|---:|---:|---|---|---:|---|"]
    for name, row in result["scenarios"].items():
        b, p = row["stats"].get("base"), row["stats"].get("patched")
        ratio = f"{p['median'] / b['median']:.3f}" if b and p and b["median"] else "n/a"

        def cell(s: dict | None, key: str) -> str:
            return f"{s[key]:.1f}" if s else "n/a"

        def span(s: dict | None) -> str:
            return f"{s['minimum']:.1f}-{s['maximum']:.1f}" if s else "n/a"
        n = f"{b['n'] if b else 0}/{p['n'] if p else 0}"
        lines.append(f"| {name} | {row['metric']} | {cell(b, 'median')} | "
                     f"{cell(p, 'median')} | {ratio} | {span(b)} | {span(p)} | {n} | "
                     f"{REFERENCE.get(name, '')} |")
    return "\n".join(lines) + "\n"


def default_mode() -> str:
    """kvm where a probe boot proves it works, else deterministic icount."""
    image = _image("base")
    return "kvm" if image.exists() and guest.kvm_usable(image) else "icount"


def run(mode: str = "icount", quick: bool = False, rounds: int | None = None,
        only: list[str] | None = None, pmem_gb: int | None = None) -> int:
    if mode == "kvm" and not guest.kvm_usable(_image("base")):
        raise LabError("--mode kvm: the KVM probe boot failed on this host")
    if not kernel_tree.has_tree():
        kernel_tree.source()
    for variant in ("base", "patched"):
        build.build(variant, "lab")
    chosen = scenarios(quick, pmem_gb)
    if only:
        unknown = set(only) - {s.name for s in chosen}
        if unknown:
            raise LabError(f"unknown bench scenario(s) {', '.join(sorted(unknown))} "
                           f"(known: {', '.join(s.name for s in chosen)})")
        chosen = [s for s in chosen if s.name in only]
    # icount is deterministic: one round per kernel, a second to prove it.
    rounds = rounds or (2 if mode == "icount" else 5)
    samples: dict[str, dict[str, list[float]]] = {}
    first: dict[str, dict[str, list[float]]] = {}
    logs: dict[str, list[str]] = {}
    kernels: dict[str, str] = {}
    start = time.monotonic()
    for sc in chosen:
        samples[sc.name] = {"base": [], "patched": []}
        first[sc.name] = {"base": [], "patched": []}
        logs[sc.name] = []
        for r in range(rounds):
            for variant in ("base", "patched"):
                say(f"bench {sc.name}: round {r + 1}/{rounds}, {variant} "
                    f"({time.monotonic() - start:.0f}s elapsed)")
                spec = guest.GuestSpec(variant=variant, script=sc.script,
                                       memory_gb=sc.memory_gb, pmem_gb=sc.pmem_gb,
                                       icount=(mode == "icount"),
                                       env=resolve_env(sc.env, variant),
                                       append=list(sc.append), timeout=3600)
                res = guest.boot_and_run(spec)
                if not res.ok:
                    raise LabError(f"bench {sc.name} on {variant} failed: "
                                   + "; ".join(res.problems()) + f" (log {res.log})")
                xs = sc.samples(res.console)
                if not xs:
                    raise LabError(f"bench {sc.name} on {variant}: no timing found "
                                   f"(log {res.log})")
                samples[sc.name][variant] += xs
                fb = sc.first_bind_us(res.console)
                if fb is not None:
                    first[sc.name][variant].append(fb)
                kernels[variant] = _kernel_release(res.log)
                logs[sc.name].append(str(res.log))
    result = {
        "mode": mode, "quick": quick, "rounds": rounds,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host_cpu": host_cpu(), "host": platform.node(),
        "kernels": kernels,
        "scenarios": {
            sc.name: {
                "metric": sc.metric, "unit": "us", "pmem_gb": sc.pmem_gb,
                "env": sc.env, "append": sc.append,
                "samples": samples[sc.name], "first_bind_us": first[sc.name],
                "stats": {v: (asdict(s) if s else None)
                          for v, s in summarize({sc.name: samples[sc.name]})[sc.name].items()},
                "logs": logs[sc.name],
            } for sc in chosen},
    }
    if mode == "icount":
        result["repeatability"] = repeatability(samples, rounds)
    table = markdown(result)
    if mode == "icount":
        table += "\n" + "\n".join(f"- {k}: {v}" for k, v in result["repeatability"].items()) + "\n"
    # latest.* is the last run; <mode>[-quick].* keeps the last of each kind.
    outdir = paths.RESULTS / (mode + ("-quick" if quick else ""))
    outdir.mkdir(parents=True, exist_ok=True)
    for stem in (paths.RESULTS / "latest", outdir / "bench"):
        stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
        stem.with_suffix(".md").write_text(table)
    print(table)
    write_plots(outdir / "bench.json", outdir)
    say(f"results: {outdir}/bench.md (also results/latest.md), plots in {outdir}")
    return 0


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


def repeatability(samples: dict[str, dict[str, list[float]]], rounds: int) -> dict[str, str]:
    """Under -icount the rounds should agree: the largest relative spread of
    a variant's per-round medians."""
    out = {}
    for name, by_variant in samples.items():
        for variant, xs in by_variant.items():
            if rounds < 2 or len(xs) < rounds:
                continue
            per = len(xs) // rounds
            medians = [statistics.median(xs[i * per:(i + 1) * per]) for i in range(rounds)]
            spread = (max(medians) - min(medians)) / min(medians) if min(medians) else 0.0
            out[f"{name}/{variant}"] = (f"round medians {', '.join(f'{m:.1f}' for m in medians)} us, "
                                        f"spread {100 * spread:.2f}%")
    return out


def _image(variant: str) -> Path:
    return paths.out_dir("x86_64", variant, "lab") / build.ARCHES["x86_64"][1]


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
