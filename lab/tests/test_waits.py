"""A user's whole wait (waits.py) on captured debian guest logs
(lab/tests/data/guest-wait-*.log): the window, its idle time, and the share
the timed calls took."""
import re

from memlab import catalog, checks, console, paths, waits
from memlab.console import MemmapInit
from memlab.results import Row
from conftest import DATA

USER_WAITS = {uw.kind: uw for uw in catalog.USER_WAITS}


def parse(name: str) -> console.Console:
    return console.parse((DATA / name).read_text(errors="replace"))


def check(kind: str, con: console.Console, **env: str) -> list[str]:
    sc = catalog.get(f"wait-{kind}")
    return sc.check(con, {**sc.env, **env})


def call(start_s: float, end_s: float) -> MemmapInit:
    return MemmapInit(1, round((end_s - start_s) * 1e9), end_s)


def test_calls_that_overlap_count_once_and_only_inside_the_window():
    window = waits.Window(1.0, 2.0)
    calls = [call(0.5, 1.25), call(1.5, 1.75), call(1.6, 1.8), call(1.9, 2.5)]
    # 0.25 (clipped at the start) + 0.3 (two threads at once) + 0.1 (clipped)
    assert abs(waits.covered_us(window, calls) - 650_000) < 1


def test_idle_time_is_not_the_wait():
    assert waits.Window(1.0, 2.0, idle_us=400_000).us == 600_000
    assert waits.Window(1.0, 2.0).us == 1_000_000


def test_the_guest_scripts_marks_are_the_ones_the_lab_reads():
    script = (paths.REPO / "scenarios" / "userwait.py").read_text()
    for name in (waits.STARTS, waits.ENDS):
        assert f'mark("{name}"' in script
    line = re.search(r'f"(memlab: mark \{name\} idle_ns=\{idle\})\\n"', script)
    assert line, "userwait.py no longer writes its marks as console.py reads them"
    con = console.parse("[    1.000000] memlab: mark wait_starts idle_ns=5\n")
    assert con.marks == [console.Mark("wait_starts", 1.0, 5)]


def test_daxctl_wait_is_its_busy_time_with_every_online_in_it():
    con = parse("guest-wait-daxctl-online-debian.log")
    [window] = waits.ONLINING.windows(con)
    assert window.idle_us is not None and window.idle_us > 0
    assert 0 < window.us < (window.end_s - window.start_s) * 1e6
    assert abs(waits.ONLINING.inside_us(con, window) - sum(c.us for c in con.onlines)) < 1
    assert check("daxctl-online", con) == []


def test_create_namespace_wait_holds_its_one_memmap_init():
    con = parse("guest-wait-create-namespace-debian.log")
    [window] = waits.ZONE_DEVICE_BIND.windows(con)
    assert waits.ZONE_DEVICE_BIND.calls_in(con, window) == con.memmap_inits
    assert check("create-namespace", con) == []
    con.memmap_inits.append(con.memmap_inits[0])
    assert "expected one memmap init" in check("create-namespace", con)[0]


def test_virtio_mem_wait_ends_when_memtotal_shows_the_plug():
    con = parse("guest-wait-virtio-mem-debian.log")
    [window] = waits.ONLINING.windows(con)
    # MemTotal showed the last block before its online_pages() returned.
    assert con.onlines[-1].start_s < window.end_s < con.onlines[-1].end_s
    assert check("virtio-mem", con) == []
    problems = check("virtio-mem", con, PLUG_MIB="2048")
    assert problems and "onlined inside the wait" in problems[0]


def test_a_wait_needs_one_start_and_one_end_in_order():
    con = parse("guest-wait-virtio-mem-debian.log")
    start, end = con.marks
    for marks in ([], [start], [start, start, end], [end, start]):
        con.marks = list(marks)
        if marks == [end, start]:
            con.marks = [console.Mark(end.name, start.ts - 1, end.idle_ns), start]
        assert waits.between_marks(con) == []
        assert "expected one timed wait" in check("virtio-mem", con)[0]


def test_boot_waits_for_the_last_nodes_deferred_init():
    con = parse("guest-wait-boot-debian.log")
    [window] = waits.BOOT.windows(con)
    assert window.end_s == max(d.end_s for d in con.deferred_inits)
    assert len(con.deferred_inits) == 2
    assert checks.check_boot_two_nodes(con, {}) == []
    # The two nodes' threads overlap: their union is less than their sum.
    inside = waits.BOOT.inside_us(con, window)
    total = sum(c.us for c in con.boot_inits + con.boot_frees + con.deferred_inits)
    assert 0 < inside < total


def test_a_rows_share_and_rest_are_medians_of_its_samples():
    row = Row(metric="m", memory_gb=1, pmem_gb=0, env={}, append=[],
              samples={"base": [100.0, 200.0, 400.0]}, first_bind_us={},
              inside_us={"base": [50.0, 50.0, 100.0]}, idle_us={"base": [1.0, 2.0, 3.0]})
    assert row.share("base") == 0.25
    assert row.rest("base") == 150.0
    assert row.idle("base") == 2.0
    assert row.share("patched") is None and row.idle("patched") is None
