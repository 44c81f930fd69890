"""The user's whole wait, as a bench row times it: a window of the guest
kernel's clock, from what the user starts to what they see done, and how
much of it the lab patches' timed calls (memmap init and the handover of
the pages to the buddy allocator) took. The rest of the window is where
the next bottleneck lies."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .console import Console, Mark, MemmapInit

# The marks a script sets around what it times (scenarios/userwait.py).
STARTS, ENDS = "wait_starts", "wait_ends"


@dataclass(frozen=True)
class Window:
    """A stretch of the guest kernel's clock, in seconds, and how long its
    CPUs were idle in it: waiting for the host, whose answers (the guest's
    files are the host's, over 9p) take as long as the host takes, not the
    guest's work. The time of a wait is its busy time, the instructions
    the guest ran in it."""
    start_s: float
    end_s: float
    idle_us: float = 0.0

    @property
    def us(self) -> float:
        """The busy time: the window less its idle time."""
        return (self.end_s - self.start_s) * 1e6 - self.idle_us


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

    def inside_us(self, con: Console, window: Window) -> float:
        return covered_us(window, [c for name in self.calls for c in getattr(con, name)])

    def problems(self, con: Console) -> list[str]:
        """Why a console has no window to time, if it has none."""
        found = self.windows(con)
        if len(found) != 1:
            return [f"expected one timed wait on the console, found {len(found)}"]
        if found[0].us <= 0:
            return [f"the timed wait took {found[0].us:.0f} us"]
        return []


def _marks(con: Console, name: str) -> list[Mark]:
    return [m for m in con.marks if m.name == name]


def between_marks(con: Console) -> list[Window]:
    """From the script's start mark to its end mark: a command the script
    ran, such as `daxctl online-memory`, from its start to its exit, less
    the time the CPUs were idle in it."""
    starts, ends = _marks(con, STARTS), _marks(con, ENDS)
    return [Window(s.ts, e.ts, (e.idle_ns - s.idle_ns) / 1000)
            for s, e in zip(starts, ends) if s.ts <= e.ts]


def virtio_mem_resize(con: Console) -> list[Window]:
    """From the moment the guest's virtio-mem driver reads the size asked
    through QEMU's monitor (its own "requested size" line) to the script's
    end mark, set when MemTotal shows the new memory; the host's delay in
    passing the request on is not the guest's. The driver's requests to
    the device are answered as they are made (QEMU runs the device in the
    vCPU's thread under TCG), so its CPU idles in the window only between
    the last polls of MemTotal, a millisecond at most: not subtracted."""
    ends = _marks(con, ENDS)
    if len(ends) != 1:
        return []
    starts = [ts for size, ts in con.virtio_mem_sizes if size and ts <= ends[0].ts]
    return [Window(starts[0], ends[0].ts)] if starts else []


def boot_until_deferred_done(con: Console) -> list[Window]:
    """From the kernel clock's zero to the end of the last node's deferred
    init thread: the boot the user waits for before init runs."""
    if not con.deferred_inits:
        return []
    return [Window(0.0, max(d.end_s for d in con.deferred_inits))]


# The calls of memory onlining, of a ZONE_DEVICE bind and of boot.
ONLINING = Wait(between_marks, ("onlines",))
VIRTIO_MEM_ONLINING = Wait(virtio_mem_resize, ("onlines",))
ZONE_DEVICE_BIND = Wait(between_marks, ("memmap_inits",))
BOOT = Wait(boot_until_deferred_done, ("boot_inits", "boot_frees", "deferred_inits"))
# The waits of user-wait.sh, by its WAIT.
BY_KIND = {"daxctl-online": ONLINING, "create-namespace": ZONE_DEVICE_BIND,
           "virtio-mem": VIRTIO_MEM_ONLINING}
