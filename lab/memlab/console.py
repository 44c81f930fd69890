"""Parsing what a guest printed: kernel failures, memmap init timings, and
the scenario scripts' `MEMLAB key=value ...` result lines."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# A kernel message line: "[   12.345678] text" (CONFIG_PRINTK_TIME=y).
_KMSG = re.compile(r"^\s*(?:<\d+>)?\[\s*(?P<ts>\d+\.\d+)\]\s?(?P<text>.*)$")

# What makes a run fail even when the guest script exited 0.
_FAILURES: list[tuple[str, re.Pattern[str]]] = [
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("oops", re.compile(r"^Oops:|^general protection fault|BUG: unable to handle")),
    ("KASAN", re.compile(r"^BUG: KASAN:")),
    ("BUG", re.compile(r"^BUG:|^kernel BUG at")),
    ("WARNING", re.compile(r"^WARNING:")),
    ("KUnit failure", re.compile(r"^\s*not ok \d+ ")),
]

_MEMMAP = re.compile(r"memmap_init_zone_device initialised (?P<pages>\d+) pages "
                     r"in (?P<ns>\d+)ns")
_RESULT = re.compile(r"^MEMLAB (?P<body>.*)$")
_KV = re.compile(r"(\w+)=(\S*)")


@dataclass(frozen=True)
class Failure:
    kind: str
    line_no: int
    line: str

    def __str__(self) -> str:
        return f"{self.kind} at console line {self.line_no}: {self.line.strip()}"


@dataclass(frozen=True)
class MemmapInit:
    """One memmap_init_zone_device() call, from the lab patch's pr_debug."""

    pages: int
    ns: int

    @property
    def us(self) -> float:
        return self.ns / 1000.0


@dataclass
class Console:
    failures: list[Failure] = field(default_factory=list)
    memmap_inits: list[MemmapInit] = field(default_factory=list)
    results: list[dict[str, str]] = field(default_factory=list)

    def result(self, key: str) -> str | None:
        """Last value a script reported for key."""
        for r in reversed(self.results):
            if key in r:
                return r[key]
        return None


def kernel_text(line: str) -> str | None:
    """The message of a kernel log line, or None for other output."""
    m = _KMSG.match(line)
    return m.group("text") if m else None


def parse(text: str, kunit_lines_fail: bool = False) -> Console:
    """Parse a console log.

    Only kernel messages (timestamped) count as failures, so a script that
    prints "WARNING:" itself does not fail the run. KUnit's "not ok" lines
    count only when kunit_lines_fail is set (KUnit runs have their own parser).
    """
    con = Console()
    for no, line in enumerate(text.splitlines(), 1):
        m = _RESULT.match(line.strip())
        if m:
            con.results.append(dict(_KV.findall(m.group("body"))))
            continue
        msg = kernel_text(line)
        if msg is None:
            continue
        mi = _MEMMAP.search(msg)
        if mi:
            con.memmap_inits.append(MemmapInit(int(mi.group("pages")), int(mi.group("ns"))))
            continue
        for kind, pattern in _FAILURES:
            if kind == "KUnit failure" and not kunit_lines_fail:
                continue
            if pattern.search(msg):
                con.failures.append(Failure(kind, no, line))
                break
    return con
