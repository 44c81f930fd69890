"""A bench run's results as data: every sample, its statistics, and the
checks on them (repeatability, equal work). Written to and read back from
results/*/bench.json; the reports (report.py) and plots read these."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .runner import LabError

# The kernels every bench row compares; ONE_THREAD is the patched kernel with
# each memmap range on one thread (rows the series spreads over the CPUs).
BASE, PATCHED, ONE_THREAD = "base", "patched", "patched-1thread"
# How ONE_THREAD's kernel is told so.
ONE_THREAD_ARG = "mm_init.zone_device_init_threads=1"

# Under -icount two boots of one kernel must agree within this.
REPEATABLE = 0.01


@dataclass(frozen=True)
class Stats:
    n: int
    median: float
    mean: float
    minimum: float
    maximum: float

    @staticmethod
    def of(xs: list[float]) -> Stats | None:
        if not xs:
            return None
        return Stats(len(xs), statistics.median(xs), statistics.fmean(xs), min(xs), max(xs))


def stats_by_variant(samples: dict[str, list[float]]) -> dict[str, Stats | None]:
    return {v: Stats.of(xs) for v, xs in samples.items()}


@dataclass
class Row:
    """One bench row: every sample of every kernel, in microseconds."""
    metric: str
    memory_gb: int
    pmem_gb: int
    env: dict[str, str]
    append: list[str]
    samples: dict[str, list[float]]
    # Rebind protocols: each boot's first memmap init (the bind), apart.
    first_bind_us: dict[str, list[float]]
    first_bind_apart: bool = False
    pages_per_call: list[int] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    unit: str = "us"
    config: str = "lab"     # the kernels' config (configs/<config>.config)
    # A user's wait (waits.py), of each sample: the microseconds spent in
    # memmap init and the handover to the buddy allocator, and those the
    # guest idled in its window (not in the sample).
    inside_us: dict[str, list[float]] = field(default_factory=dict)
    idle_us: dict[str, list[float]] = field(default_factory=dict)

    @property
    def stats(self) -> dict[str, Stats | None]:
        return stats_by_variant(self.samples)

    @property
    def first_bind_stats(self) -> dict[str, Stats | None] | None:
        return stats_by_variant(self.first_bind_us) if self.first_bind_apart else None

    def median(self, variant: str) -> float | None:
        st = self.stats.get(variant)
        return st.median if st else None

    def ratio(self, variant: str = PATCHED, over: str = BASE) -> float | None:
        """patched/base of the medians (or any two variants)."""
        top, bottom = self.median(variant), self.median(over)
        return top / bottom if top is not None and bottom else None

    def _of_waits(self, variant: str, of: Callable[[float, float], float | None],
                  ) -> float | None:
        """The median over a wait's samples of @of(sample, inside)."""
        xs = [x for wait, inside in zip(self.samples.get(variant, []),
                                        self.inside_us.get(variant, []))
              if (x := of(wait, inside)) is not None]
        return statistics.median(xs) if xs else None

    def share(self, variant: str) -> float | None:
        """A wait's median share of memmap init and handover."""
        return self._of_waits(variant, lambda wait, inside: inside / wait if wait else None)

    def rest(self, variant: str) -> float | None:
        """A wait's median time outside memmap init and handover."""
        return self._of_waits(variant, lambda wait, inside: wait - inside)

    def idle(self, variant: str) -> float | None:
        """A wait's median idle time, left out of its samples."""
        xs = self.idle_us.get(variant, [])
        return statistics.median(xs) if xs else None

    def per_page(self, variant: str) -> float | None:
        """Median time per struct page, where every timed call covered the
        same number of pages (under -icount: instructions per page)."""
        med = self.median(variant)
        if len(self.pages_per_call) != 1 or not self.pages_per_call[0] or med is None:
            return None
        return 1000 * med / self.pages_per_call[0]


@dataclass(frozen=True)
class Repeat:
    round_medians: list[float]
    spread: float


@dataclass
class Result:
    """A `memlab bench` run."""
    mode: str
    label: str
    quick: bool
    rounds: int
    guest_vcpus: int
    date: str
    host_cpu: str
    host: str
    kernels: dict[str, str]
    timing: str
    rows: dict[str, Row]
    elapsed_s: int | None = None
    repeatability: dict[str, Repeat] | None = None
    # What code it measured (provenance.py); None in records older than it.
    provenance: dict[str, Any] | None = None

    @property
    def repeatable(self) -> bool | None:
        return None if self.repeatability is None else not unrepeatable_rows(self.repeatability)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in asdict(self).items()
                               if k not in ("rows", "repeatability")}
        out["scenarios"] = {}
        for name, row in self.rows.items():
            d = asdict(row)
            d["stats"] = {v: asdict(s) if s else None for v, s in row.stats.items()}
            fb = row.first_bind_stats
            d["first_bind_stats"] = ({v: asdict(s) if s else None for v, s in fb.items()}
                                     if fb is not None else None)
            del d["first_bind_apart"]
            out["scenarios"][name] = d
        if self.repeatability is not None:
            out["repeatability"] = {k: asdict(r) for k, r in self.repeatability.items()}
            out["repeatable"] = self.repeatable
        return out

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @staticmethod
    def from_json(data: dict[str, Any]) -> Result:
        rows = {name: Row(
            metric=r["metric"], memory_gb=r["memory_gb"], pmem_gb=r["pmem_gb"],
            env=r["env"], append=r["append"], samples=r["samples"],
            first_bind_us=r.get("first_bind_us", {}),
            first_bind_apart=r.get("first_bind_stats") is not None,
            pages_per_call=r.get("pages_per_call", []), logs=r.get("logs", []),
            unit=r.get("unit", "us"), config=r.get("config", "lab"),
            inside_us=r.get("inside_us", {}), idle_us=r.get("idle_us", {}))
            for name, r in data["scenarios"].items()}
        rep = data.get("repeatability")
        return Result(
            mode=data["mode"], label=data["label"], quick=data.get("quick", False),
            rounds=data["rounds"], guest_vcpus=data.get("guest_vcpus", 1),
            date=data["date"], host_cpu=data["host_cpu"], host=data.get("host", "?"),
            kernels=data["kernels"], timing=data.get("timing", ""), rows=rows,
            elapsed_s=data.get("elapsed_s"), provenance=data.get("provenance"),
            repeatability={k: Repeat(r["round_medians"], r["spread"]) for k, r in rep.items()}
            if rep is not None else None)

    @staticmethod
    def load(path: Path) -> Result:
        try:
            return Result.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise LabError(f"{path}: not a bench result ({type(e).__name__}: {e})") from None


def repeatability(samples: dict[str, dict[str, list[float]]],
                  rounds: int) -> dict[str, Repeat]:
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
            out[f"{name}/{variant}"] = Repeat(medians, spread)
    return out


def unrepeatable_rows(rep: dict[str, Repeat]) -> list[str]:
    """Rows whose rounds disagree by more than REPEATABLE."""
    return [f"{k} spread {100 * r.spread:.2f}%" for k, r in rep.items()
            if r.spread > REPEATABLE]


def unequal_page_counts(pages: dict[str, dict[str, set[int]]]) -> list[str]:
    """Rows whose kernels initialized different numbers of struct pages
    per timed call: they did not do the same work, whatever their times."""
    return [f"{name}: " + ", ".join(f"{v} {sorted(counts)}" for v, counts in by_variant.items())
            for name, by_variant in pages.items()
            if len({frozenset(counts) for counts in by_variant.values()}) > 1]
