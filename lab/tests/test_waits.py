"""A user's whole wait (waits.py) on captured debian guest logs
(lab/tests/data/guest-wait-*.log): the window, its idle time, and the share
the timed calls took."""
from memlab import checks, console, waits
from memlab.console import MemmapInit
from memlab.results import Row
from conftest import DATA


def parse(name: str) -> console.Console:
    return console.parse((DATA / name).read_text(errors="replace"))


def call(start_s: float, end_s: float) -> MemmapInit:
    return MemmapInit(1, round((end_s - start_s) * 1e9), end_s)


def test_calls_that_overlap_count_once_and_only_inside_the_window():
    window = waits.Window(1.0, 2.0)
    calls = [call(0.5, 1.25), call(1.5, 1.75), call(1.6, 1.8), call(1.9, 2.5)]
    # 0.25 (clipped at the start) + 0.3 (two threads at once) + 0.1 (clipped)
    assert abs(waits.covered_us(window, calls) - 650_000) < 1


def test_idle_time_is_not_the_wait():
    assert waits.Window(1.0, 2.0, idle_us=400_000).us == 600_000


def test_daxctl_wait_is_its_busy_time_with_every_online_in_it():
    con = parse("guest-wait-daxctl-online-debian.log")
    [window] = waits.ONLINING.windows(con)
    assert window.idle_us > 0                    # the tools read over 9p
    assert 0 < window.us < (window.end_s - window.start_s) * 1e6
    inside = waits.ONLINING.inside_us(con, window)
    assert abs(inside - sum(c.us for c in con.onlines)) < 1
    assert checks.check_user_wait(con, {"WAIT": "daxctl-online", "PLUG_MIB": "1024"}) == []


def test_virtio_mem_wait_starts_at_the_drivers_read_of_the_new_size():
    con = parse("guest-wait-virtio-mem-debian.log")
    [window] = waits.VIRTIO_MEM_ONLINING.windows(con)
    asked = [ts for size, ts in con.virtio_mem_sizes if size == 1 << 30]
    assert window.start_s == asked[0]
    # MemTotal showed the last block before its online_pages() returned.
    assert con.onlines[-1].end_s > window.end_s
    assert checks.check_user_wait(con, {"WAIT": "virtio-mem", "PLUG_MIB": "1024"}) == []


def test_a_wait_short_of_its_work_fails_the_check():
    con = parse("guest-wait-virtio-mem-debian.log")
    problems = checks.check_user_wait(con, {"WAIT": "virtio-mem", "PLUG_MIB": "2048"})
    assert problems and "onlined inside the wait" in problems[0]
    con.marks.clear()
    assert "expected one timed wait" in checks.check_user_wait(
        con, {"WAIT": "virtio-mem", "PLUG_MIB": "1024"})[0]


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


def test_a_rows_share_is_the_median_of_its_samples_shares():
    row = Row(metric="m", memory_gb=1, pmem_gb=0, env={}, append=[],
              samples={"base": [100.0, 200.0, 400.0]}, first_bind_us={},
              inside_us={"base": [50.0, 50.0, 100.0]})
    assert row.share("base") == 0.25
    assert row.share("patched") is None
