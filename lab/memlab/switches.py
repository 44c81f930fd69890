"""The series' boot parameters that turn a fast path off, and what the
kernel's own reports say when a guest booted with one (or with none) ran
the fast-paths scenario: the path and page state of each memmap init
(mminit_loglevel=3 and memmap_init_zone_device()'s debug line) and how
x86-64 clears large runs (its boot line)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from . import kernel_base
from .console import Console
from .series import Series

PAGE_BY_PAGE = "page by page"
TEMPLATE = "from a template"
STREAMED = "from a template, streamed"
# The zone dax kmem's blocks are onlined to (fast-paths.sh): what tells a
# hot-added range's report from a boot range's.
HOT_ADDED_ZONE = "Movable"


@dataclass(frozen=True)
class Switch:
    param: str      # as on the kernel command line, with its "off" value
    turns_off: str  # the fast path, in the operators' words

    @property
    def name(self) -> str:
        return self.param.split("=")[0]


SWITCHES = (
    Switch("memmap_template=off", "the template init of every memmap (boot, deferred, "
           "hot-added, ZONE_DEVICE): every struct page field by field"),
    Switch("memmap_stream=off", "streaming (non-temporal) stores in memmap init: "
           "template copies with plain stores"),
    Switch("mm_init.zone_device_init_threads=1", "the all-CPU init of large ZONE_DEVICE "
           "ranges: the binding thread alone"),
    Switch("memmap_single_pass=off", "the single pass to the buddy allocator: fresh pages "
           "written in use (or offline) and walked again to free them, their tails "
           "checked there where the page checks are on (init_on_alloc=1, Debian's "
           "default, or init_on_free=1)"),
    Switch("clear_pages_stream=off", "x86-64's streaming clear of runs of 8 to 32 MB "
           "(1 GB hugetlb folios zeroed for userspace): one string operation"),
)


def get(name: str) -> Switch:
    return next(s for s in SWITCHES if s.name == name)


@cache
def offered() -> tuple[Switch, ...]:
    """The switches of the base in use: those its series documents in
    kernel-parameters.txt (mainline's has no streaming clear)."""
    text = "".join(p.read_text(errors="replace")
                   for p in Series(kernel_base.current().series).patches())
    return tuple(s for s in SWITCHES
                 if re.search(rf"^\+\t{re.escape(s.name)}=", text, re.M))


@dataclass(frozen=True)
class Expected:
    """What each report must say with at most one switch off."""
    template: bool = True
    stream: bool = True
    single_pass: bool = True
    threads_capped: bool = False
    clear_stream: bool = True

    @staticmethod
    def with_off(switch: str) -> "Expected":
        """With @switch (its name, "" for none) off."""
        return Expected(template=switch != "memmap_template",
                        stream=switch != "memmap_stream",
                        single_pass=switch != "memmap_single_pass",
                        threads_capped=switch == "mm_init.zone_device_init_threads",
                        clear_stream=switch != "clear_pages_stream")

    def template_paths(self, streams: bool, large: bool | None) -> set[str]:
        """The paths a range may take: streamed when it @streams and
        streaming is on; else streamed only when @large (None: either, as
        boot's ranges of every size)."""
        if not self.template:
            return {PAGE_BY_PAGE}
        if not self.stream:
            return {TEMPLATE}
        if streams:
            return {STREAMED}
        return {TEMPLATE, STREAMED} if large is None else {STREAMED if large else TEMPLATE}


def check(con: Console, switch: str, cpus: int, clear_with: str) -> list[str]:
    """Every report of the run as @switch (off; "" for none) wants it: the
    boot, deferred and hot-added ranges' paths and states, each
    ZONE_DEVICE range's path and threads, x86-64's large clear (@clear_with
    where it streams)."""
    want = Expected.with_off(switch)
    problems: list[str] = []
    boot = [p for p in con.memmap_paths if not p.deferred and p.zone != HOT_ADDED_ZONE]
    deferred = [p for p in con.memmap_paths if p.deferred]
    hot = [p for p in con.memmap_paths if p.zone == HOT_ADDED_ZONE]
    # Per kind of range: its reports, its state with and without the single
    # pass, whether a range left free streams, whether it is large.
    for what, reports, states, free_streams, large in (
            ("boot", boot, ("free", "in use"), True, None),
            # A deferred range (one MAX_ORDER block) is freed right after:
            # plain stores always.
            ("deferred", deferred, ("free", "in use"), False, False),
            # A 128 MB block's memmap (2 MB) is kept in the caches when the
            # walk reads it back.
            ("hot-added", hot, ("free", "offline"), True, False)):
        state = states[0] if want.single_pass else states[1]
        paths = want.template_paths(free_streams and want.single_pass, large)
        if not reports:
            problems.append(f"no {what} memmap init reported (mminit_loglevel=3)")
        bad = sorted({f"{p.path}, {p.state}" for p in reports
                      if p.path not in paths or p.state != state})
        if bad:
            problems.append(f"{what} ranges went {bad}, expected "
                            f"{' or '.join(sorted(paths))}, {state}")
    # Never read back soon: streamed unless streaming is off.
    device_paths = want.template_paths(True, None)
    threads = 1 if want.threads_capped else cpus
    if not con.memmap_shares:
        problems.append("no ZONE_DEVICE memmap init reported")
    bad_device = sorted({f"{s.path}, {s.threads} threads" for s in con.memmap_shares
                         if s.path not in device_paths or s.threads != threads})
    if bad_device:
        problems.append(f"ZONE_DEVICE ranges went {bad_device}, expected "
                        f"{' or '.join(sorted(device_paths))}, {threads} threads")
    if get("clear_pages_stream") not in offered():
        if con.clear_pages_large is not None:
            problems.append(f"large runs are reported cleared with {con.clear_pages_large}, "
                            "which this series does not do")
        return problems
    clear = clear_with if want.clear_stream else "one string operation"
    if con.clear_pages_large != clear:
        problems.append(f"large runs are cleared with {con.clear_pages_large}, "
                        f"expected {clear}")
    return problems
