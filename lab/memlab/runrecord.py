"""Records of whole runs in results/: each step's checks and time, so that
the documents' CI and proof tables come from runs, not from prose.

`memlab test` keeps its last complete run of each plan (results/test/
default.json, full.json), and adds to full.json the steps of a passing
`--full` run that left some out (a step re-run so names its own date and
code; the first such run starts the record when no whole run made one);
`memlab ci` keeps its last cold and warm run (results/ci/cold.json,
warm.json), the quick bench included.
"""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Protocol

from . import hostinfo, paths
from .runner import LabError

TEST_RESULTS = paths.RESULTS / "test"
CI_RESULTS = paths.RESULTS / "ci"


def test_record(full: bool, base: str | None = None) -> Path:
    """Where `memlab test` on @base (None: the base in use) keeps its last
    whole run of the default plan or, with @full, of --full."""
    directory = (TEST_RESULTS if base is None or base == paths.BASE
                 else paths.results_of(base) / "test")
    return directory / ("full.json" if full else "default.json")


@dataclass
class StepRecord:
    name: str
    passed: int
    failed: int
    seconds: float
    skipped: int = 0
    # The guest steps' passing runs by name ("fast-paths", "pmem (base)"),
    # so that a document can cite the run that proves one scenario.
    passed_cases: list[str] = field(default_factory=list)
    # Set on a step that a later partial run re-ran: when, and what code
    # it ran (provenance.py); None: the record's own.
    date: str | None = None
    provenance: dict[str, Any] | None = None


@dataclass
class RunRecord:
    date: str
    host_cpu: str
    commit: str
    exit_code: int
    seconds: float
    steps: list[StepRecord] = field(default_factory=list)
    cold: bool | None = None    # the compiler cache was empty at the start
    # What code it ran (provenance.py); None in records older than it.
    provenance: dict[str, Any] | None = None
    # False: no whole run made this record, only partial runs (each step
    # names its own), and the fields above are the first part's.
    whole: bool = True

    @classmethod
    def now(cls, exit_code: int, seconds: float, steps: list[StepRecord],
            provenance: dict[str, Any], cold: bool | None = None) -> RunRecord:
        return cls(date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), host_cpu=hostinfo.cpu_model(),
                   commit=head_commit(), exit_code=exit_code, seconds=round(seconds, 1),
                   steps=steps, cold=cold, provenance=provenance)

    def step(self, name: str) -> StepRecord | None:
        return next((s for s in self.steps if s.name == name), None)

    def with_steps_of(self, later: RunRecord) -> RunRecord:
        """This record with @later's steps (a partial run's) in place of its
        own of the same name, each naming @later's date and code."""
        rerun = {s.name: replace(s, date=later.date, provenance=later.provenance)
                 for s in later.steps}
        steps = [rerun.pop(s.name, s) for s in self.steps]
        return replace(self, steps=steps + list(rerun.values()))

    @classmethod
    def from_part(cls, part: RunRecord) -> RunRecord:
        """A record started by a partial run, where no whole run made one."""
        return replace(part, steps=[], whole=False).with_steps_of(part)

    def rerun_steps(self) -> dict[str, list[StepRecord]]:
        """The steps later partial runs re-ran, by the date of each run."""
        runs: dict[str, list[StepRecord]] = {}
        for s in self.steps:
            if s.date is not None:
                runs.setdefault(s.date, []).append(s)
        return runs

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        try:
            data = json.loads(path.read_text())
            steps = [StepRecord(**s) for s in data.pop("steps")]
            return cls(**data, steps=steps)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise LabError(f"{path}: not a run record ({type(e).__name__}: {e})") from None


class Counted(Protocol):
    passed: int
    failed: int


def totals(steps: Iterable[Counted]) -> tuple[int, int]:
    """Checks passed and failed over some steps."""
    steps = list(steps)
    return sum(s.passed for s in steps), sum(s.failed for s in steps)


def head_commit() -> str:
    res = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=paths.REPO,
                         capture_output=True, text=True, check=False)
    return res.stdout.strip() or "?"
