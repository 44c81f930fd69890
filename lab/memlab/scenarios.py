"""Guest scenarios as the test suite runs them: what to boot, what to assert.

Each scenario names its guest script (scenarios/NAME.sh), the machine it
needs, and a check that turns the parsed console into a list of problems.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import guest
from .console import Console

PAGE_SIZE = 4096


def _int(value: str | None) -> int | None:
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def check_rebinds(con: Console, rebinds: int) -> list[str]:
    """fsdax/devdax rebind protocol: one memmap init per bind, every one over
    the pfn device's data pages, and the data intact."""
    problems = []
    if con.result("done") != "1":
        problems.append("scenario did not report done=1")
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
    before, after = con.result("checksum_before"), con.result("checksum_after")
    if not before or before != after:
        problems.append(f"pmem data checksum before {before} != after {after}")
    return problems


@dataclass
class Scenario:
    name: str
    script: str
    description: str
    memory_gb: int = 2
    pmem_gb: int = 0
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[Console], list[str]] = lambda con: []
    # A runner self-test: the run must fail with this kind of console report.
    expect_failure: str | None = None

    def spec(self, variant: str, config: str = "lab", icount: bool = False) -> guest.GuestSpec:
        return guest.GuestSpec(variant=variant, config=config, script=self.script,
                               memory_gb=self.memory_gb, pmem_gb=self.pmem_gb,
                               icount=icount, env=dict(self.env))


SMOKE_REBINDS = 3

SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in [
        Scenario(
            name="fsdax-rebind-smoke",
            script="fsdax-rebind",
            description="fsdax map=dev on a 4 GB legacy pmem region, "
                        f"{SMOKE_REBINDS} unbind/bind cycles, data checksummed",
            memory_gb=5, pmem_gb=4,
            env={"REBINDS": str(SMOKE_REBINDS), "MAP": "dev"},
            check=lambda con: check_rebinds(con, SMOKE_REBINDS)),
        Scenario(
            name="runner-catches-warn",
            script="provoke-warn",
            description="LKDTM WARNING from a script that exits 0: the runner "
                        "must fail the run from the console alone",
            expect_failure="WARNING"),
    ]
}


def get(name: str) -> Scenario:
    from .runner import LabError
    if name not in SCENARIOS:
        raise LabError(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    return SCENARIOS[name]
