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
# The kernel's own debug line of each ZONE_DEVICE memmap init (dynamic
# debug), in milliseconds: what the reference postings measured with.
_DEVICE_MS = re.compile(r"memmap_init_zone_device initialised (?P<pages>\d+) pages "
                        r"in (?P<ms>\d+)ms")
# The paths the series names in its reports.
_PATH = r"(?P<path>page by page|from a template(?:, streamed)?)"
# The series' own pr_debug line: the path a range took, and how many
# threads shared it.
_SHARED = re.compile(r"memmap_init_zone_device initialised (?P<pages>\d+) pages in \d+ms, "
                     + _PATH + r", up to (?P<threads>\d+) threads")
# The series' trace of the other memmap inits (mminit_loglevel=3): boot and
# hot-added ranges, and each node's deferred pages; the path each took and
# the state it left its pages in.
_MMINIT = re.compile(r"mminit::memmap_init node (?P<node>\d+) zone (?P<zone>\S+): "
                     r"(?:(?P<pages>\d+) pages|(?P<deferred>deferred) pages) " + _PATH
                     + r", (?P<state>in use|offline|free)$")
# x86-64's choice for large runs of pages to clear, printed at boot.
_CLEAR = re.compile(r"clear_pages: runs of \d+ to \d+ MB with (?P<how>.+)$")
# Hot-added memory (lab patch): each onlined range's memmap init, and the
# whole online_pages() call.
_HOTPLUG_INIT = re.compile(r"memmap_init_range initialised (?P<pages>\d+) hot-added pages "
                           r"in (?P<ns>\d+)ns")
_ONLINE = re.compile(r"online_pages: onlined (?P<pages>\d+) pages in (?P<ns>\d+)ns")
# Boot (lab patch): memmap_init() of all boot memory, and memblock_free_all()
# handing it to the buddy allocator.
_BOOT_INIT = re.compile(r"memmap_init: (?P<pages>\d+) pages of boot memory in (?P<ns>\d+)ns")
_BOOT_FREE = re.compile(r"memblock_free_all: (?P<pages>\d+) pages freed in (?P<ns>\d+)ns")
# With deferred struct page init (lab patch): each node's deferred init
# thread, the pages it initialized and freed.
_DEFERRED = re.compile(r"deferred_init_memmap: node (?P<node>\d+): (?P<pages>\d+) deferred "
                       r"pages in (?P<ns>\d+)ns")
# A CPU taken offline at run time: the guest script's mark as it starts,
# x86's line when it is done.
_CPU_GOING_OFFLINE = re.compile(r"memlab: CPU (?P<cpu>\d+) going offline")
_CPU_OFFLINE = re.compile(r"CPU (?P<cpu>\d+) is now offline")
# A guest script's mark on the kernel's clock, with the CPUs' idle time so
# far (scenarios/userwait.py).
_MARK = re.compile(r"memlab: mark (?P<name>\w+) idle_ns=(?P<idle>\d+)$")
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
    """One timed call from a lab patch's line: memmap_init_zone_device(),
    the memmap init of a hot-added range, a whole online_pages(), boot's
    memmap_init() or its memblock_free_all(), or a node's deferred init."""

    pages: int
    ns: int
    # The console timestamp of the line, printed when the call returned.
    end_s: float = 0.0
    # The node, for a deferred init thread's line.
    node: int | None = None

    @property
    def us(self) -> float:
        return self.ns / 1000.0

    @property
    def start_s(self) -> float:
        return self.end_s - self.ns / 1e9

    def overlaps(self, other: "MemmapInit") -> bool:
        """Whether the two calls ran at the same time, at least in part."""
        return self.start_s < other.end_s and other.start_s < self.end_s


@dataclass(frozen=True)
class Mark:
    """A point a guest script marked on the kernel's clock."""
    name: str
    ts: float           # console timestamp
    idle_ns: int        # the CPUs' idle time so far


@dataclass(frozen=True)
class MemmapShare:
    """How one memmap_init_zone_device() range was initialized: its path
    and how many threads shared it."""

    pages: int
    threads: int        # the caller and the workers it queued to
    path: str = ""      # "page by page", "from a template"[, "streamed"]


@dataclass(frozen=True)
class MemmapPath:
    """The path of one boot, hot-added or deferred memmap init, and the
    state it left the pages in (the series' mminit trace)."""

    node: int
    zone: str
    pages: int | None   # None for a node's deferred pages
    path: str
    state: str          # "in use", "offline", "free"

    @property
    def deferred(self) -> bool:
        return self.pages is None


@dataclass
class Console:
    failures: list[Failure] = field(default_factory=list)
    memmap_inits: list[MemmapInit] = field(default_factory=list)
    memmap_shares: list[MemmapShare] = field(default_factory=list)
    # The kernel's own line of each ZONE_DEVICE memmap init: (pages, ms).
    device_inits_ms: list[tuple[int, int]] = field(default_factory=list)
    memmap_paths: list[MemmapPath] = field(default_factory=list)
    # How x86-64 clears large runs of pages, as its boot line said.
    clear_pages_large: str | None = None
    hotplug_inits: list[MemmapInit] = field(default_factory=list)
    onlines: list[MemmapInit] = field(default_factory=list)
    boot_inits: list[MemmapInit] = field(default_factory=list)
    boot_frees: list[MemmapInit] = field(default_factory=list)
    deferred_inits: list[MemmapInit] = field(default_factory=list)
    # Each CPU taken offline: (CPU, console timestamp of the start, of the end).
    cpu_offlines: list[tuple[int, float, float]] = field(default_factory=list)
    # A script's marks.
    marks: list[Mark] = field(default_factory=list)
    results: list[dict[str, str]] = field(default_factory=list)

    @property
    def boot_init_and_free(self) -> list[MemmapInit]:
        """Each boot's memmap_init() and memblock_free_all() as one call:
        the pages initialized, the time of both."""
        return [MemmapInit(init.pages, init.ns + free.ns, free.end_s)
                for init, free in zip(self.boot_inits, self.boot_frees)]

    def result(self, key: str) -> str | None:
        """Last value a script reported for key."""
        for r in reversed(self.results):
            if key in r:
                return r[key]
        return None

    def result_values(self, key: str) -> list[str]:
        """Every value a script reported for key, in order."""
        return [r[key] for r in self.results if key in r]


def parse(text: str, kunit_lines_fail: bool = False, bare: bool = False) -> Console:
    """Parse a console log.

    Only kernel messages (timestamped) count as failures, so a script that
    prints "WARNING:" itself does not fail the run; a bare boot (bare: no
    userspace) has no other lines, and its kernel may print no timestamps
    (CONFIG_PRINTK_TIME off), so there every line counts. KUnit's "not ok"
    lines count only when kunit_lines_fail is set (KUnit runs have their
    own parser).
    """
    con = Console()
    offline_starts: dict[int, float] = {}     # CPU: when its offline began
    for no, line in enumerate(text.splitlines(), 1):
        m = _RESULT.match(line.strip())
        if m:
            con.results.append(dict(_KV.findall(m.group("body"))))
            continue
        km = _KMSG.match(line)
        if km is None and not bare:
            continue
        msg = km.group("text") if km else line.strip()
        ts = float(km.group("ts")) if km else 0.0
        timed = next(((calls, m) for calls, pattern in
                      ((con.memmap_inits, _MEMMAP), (con.hotplug_inits, _HOTPLUG_INIT),
                       (con.onlines, _ONLINE), (con.boot_inits, _BOOT_INIT),
                       (con.boot_frees, _BOOT_FREE), (con.deferred_inits, _DEFERRED))
                      if (m := pattern.search(msg))), None)
        if timed:
            calls, m = timed
            node = m.groupdict().get("node")
            calls.append(MemmapInit(int(m.group("pages")), int(m.group("ns")), ts,
                                    None if node is None else int(node)))
            continue
        md = _DEVICE_MS.search(msg)
        if md:
            con.device_inits_ms.append((int(md.group("pages")), int(md.group("ms"))))
            if ms := _SHARED.search(msg):
                con.memmap_shares.append(MemmapShare(int(ms.group("pages")),
                                                     int(ms.group("threads")),
                                                     ms.group("path")))
            continue
        mp = _MMINIT.search(msg)
        if mp:
            pages = mp.group("pages")
            con.memmap_paths.append(MemmapPath(int(mp.group("node")), mp.group("zone"),
                                               None if pages is None else int(pages),
                                               mp.group("path"), mp.group("state")))
            continue
        mcl = _CLEAR.search(msg)
        if mcl:
            con.clear_pages_large = mcl.group("how")
            continue
        mk = _MARK.search(msg)
        if mk:
            con.marks.append(Mark(mk.group("name"), ts, int(mk.group("idle"))))
            continue
        mc = _CPU_GOING_OFFLINE.search(msg)
        if mc:
            offline_starts[int(mc.group("cpu"))] = ts
            continue
        mc = _CPU_OFFLINE.search(msg)
        if mc and (cpu := int(mc.group("cpu"))) in offline_starts:
            con.cpu_offlines.append((cpu, offline_starts.pop(cpu), ts))
            continue
        for kind, pattern in _FAILURES:
            if kind == "KUnit failure" and not kunit_lines_fail:
                continue
            if pattern.search(msg):
                con.failures.append(Failure(kind, no, line))
                break
    return con
