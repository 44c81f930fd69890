"""`memlab ci`: what `.ci/run` runs (`memlab test`, then `memlab bench
--quick`), each step timed and recorded in results/ci/, so that the
documents' CI table comes from a run, not from prose.

A run whose ccache was empty when it started is a cold run: it builds
every kernel from nothing, the time a fresh machine takes. Its record
goes to results/ci/cold.json; any other run's to results/ci/warm.json.
"""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import bench, build, hostinfo, paths, testcmd
from .runner import LabError, say

CI_RESULTS = paths.RESULTS / "ci"
BENCH_STEP = "bench --quick"


@dataclass
class StepTime:
    name: str
    passed: int
    failed: int
    seconds: float


@dataclass
class CiRecord:
    date: str
    host_cpu: str
    commit: str
    cold: bool
    exit_code: int
    seconds: float
    steps: list[StepTime] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "cold" if self.cold else "warm"

    def write(self, directory: Path | None = None) -> Path:
        directory = directory or CI_RESULTS
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.kind}.json"
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: Path) -> CiRecord:
        try:
            data = json.loads(path.read_text())
            steps = [StepTime(**s) for s in data.pop("steps")]
            return cls(**data, steps=steps)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise LabError(f"{path}: not a CI record ({type(e).__name__}: {e})") from None


def ccache_files() -> int | None:
    """Entries in the compiler cache the builds use; None when unknown."""
    try:
        res = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                             env=build.ccache_env(), check=False)
    except OSError:
        return None     # not installed yet: `memlab test` installs it, and the cache is empty
    for line in res.stdout.splitlines():
        key, _, value = line.partition("\t")
        if key == "files_in_cache" and value.strip().isdigit():
            return int(value)
    return None


def commit() -> str:
    res = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=paths.REPO,
                         capture_output=True, text=True, check=False)
    return res.stdout.strip() or "?"


def run() -> int:
    cached = ccache_files()
    start = time.monotonic()
    test = testcmd.execute()
    test.print_summary()
    steps = [StepTime(s.name, s.passed, s.failed, round(s.seconds, 1)) for s in test.steps]
    exit_code = 0 if test.ok else 1
    if test.ok:
        t0 = time.monotonic()
        try:
            exit_code = bench.run(quick=True)
        except LabError as e:
            say(f"bench --quick: {e}")
            exit_code = 1
        steps.append(StepTime(BENCH_STEP, int(exit_code == 0), int(exit_code != 0),
                              round(time.monotonic() - t0, 1)))
    record = CiRecord(date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                      host_cpu=hostinfo.cpu_model(), commit=commit(), cold=not cached,
                      exit_code=exit_code, seconds=round(time.monotonic() - start, 1),
                      steps=steps)
    path = record.write()
    say(f"CI run ({record.kind}, {record.seconds / 60:.1f} min, exit {exit_code}) "
        f"recorded in {path}")
    passed = sum(s.passed for s in steps)
    failed = sum(s.failed for s in steps)
    print(f"memlab: {passed} passed, {failed} failed", flush=True)
    return exit_code
