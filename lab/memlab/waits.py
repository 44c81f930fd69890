"""The user's whole wait, as a bench row times it: a window of the guest
kernel's clock, from what the user starts to what they see done, and how
much of it the lab patches' timed calls (memmap init and the handover of
the pages to the buddy allocator) took. The rest of the window is where
the next bottleneck lies."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .console import Console, MemmapInit

# The marks a script sets around what it times (scenarios/userwait.py).
STARTS, ENDS = "wait_starts", "wait_ends"


@dataclass(frozen=True)
class Window:
    """A stretch of the guest kernel's clock, in seconds, and how long its
    one CPU idled in it. Between a script's marks the idle time is waiting
    for the host (the guest's files, the request to resize a device),
    which takes as long as the host takes, or the kernel's own waits; the
    wait counts neither, only the instructions the guest ran: its busy
    time."""
    start_s: float
    end_s: float
    idle_us: float | None = None        # None: not measured, none to leave out

    @property
    def us(self) -> float:
        """The busy time: the window less its idle time."""
        return (self.end_s - self.start_s) * 1e6 - (self.idle_us or 0.0)


def covered_us(window: Window, calls: list[MemmapInit]) -> float:
    """Microseconds of @window in which at least one of @calls ran (calls
    that overlap, such as two nodes' deferred init threads, count once)."""
    spans = sorted((max(c.start_s, window.start_s), min(c.end_s, window.end_s))
                   for c in calls)
    covered, reached = 0.0, window.start_s
    for start, end in spans:
        start = max(start, reached)
        if end > start:
            covered += end - start
            reached = end
    return covered * 1e6


@dataclass(frozen=True)
class Wait:
    """What a row times: how a console's windows are found, and the
    Console lists of the timed calls whose time inside them counts as
    memmap init and handover."""
    windows: Callable[[Console], list[Window]]
    calls: tuple[str, ...]

    def calls_in(self, con: Console, window: Window) -> list[MemmapInit]:
        """The timed calls that ran in @window, at least in part."""
        return [c for name in self.calls for c in getattr(con, name)
                if c.start_s < window.end_s and window.start_s < c.end_s]

    def inside_us(self, con: Console, window: Window) -> float:
        return covered_us(window, self.calls_in(con, window))

    def problems(self, con: Console) -> list[str]:
        """Why a console has no window to time, if it has none."""
        found = self.windows(con)
        if len(found) != 1:
            return [f"expected one timed wait on the console, found {len(found)}"]
        if found[0].us <= 0:
            return [f"the timed wait took {found[0].us:.0f} us"]
        return []


def between_marks(con: Console) -> list[Window]:
    """From the script's start mark to its end mark, less the idle time
    between them; none unless the console has one of each, in order."""
    starts = [m for m in con.marks if m.name == STARTS]
    ends = [m for m in con.marks if m.name == ENDS]
    if len(starts) != 1 or len(ends) != 1 or ends[0].ts < starts[0].ts:
        return []
    start, end = starts[0], ends[0]
    return [Window(start.ts, end.ts, (end.idle_ns - start.idle_ns) / 1000)]


def boot_until_deferred_done(con: Console) -> list[Window]:
    """From the kernel clock's zero to the end of the last node's deferred
    init thread, which page_alloc_init_late() waits for before the
    initcalls run. Nothing in it waits for the host."""
    if not con.deferred_inits:
        return []
    return [Window(0.0, max(d.end_s for d in con.deferred_inits))]


# Memory onlined (online_pages(): its memmap init and handover), a
# ZONE_DEVICE range bound, and boot.
ONLINING = Wait(between_marks, ("onlines",))
ZONE_DEVICE_BIND = Wait(between_marks, ("memmap_inits",))
BOOT = Wait(boot_until_deferred_done, ("boot_inits", "boot_frees", "deferred_inits"))
