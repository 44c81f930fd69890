"""run_logged on real subprocesses: timeouts, killed children, failures."""
import os
import time
from pathlib import Path

import pytest

from memlab.runner import LabError, run_logged, run_quiet


def gone(pid: int) -> bool:
    """Dead: no such process, or a zombie nobody reaps (the container's
    init may not), which holds no resources and runs no more."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def test_timeout_kills_a_command_that_went_quiet_and_reports_its_tail(tmp_path):
    # Output then a hang: the message must show where it stopped.
    log = tmp_path / "logs" / "x.log"
    start = time.monotonic()
    with pytest.raises(LabError) as exc:
        run_logged(["sh", "-c", "echo one; echo two; sleep 30"], log, "hang",
                   timeout=1)
    assert time.monotonic() - start < 10
    msg = str(exc.value)
    assert msg.startswith("hang: timed out")
    assert "one\ntwo\n" in msg
    text = log.read_text()
    assert text.startswith("$ sh -c echo one; echo two; sleep 30\n")
    assert "one\ntwo\n" in text


def test_timeout_kills_a_silent_hang_and_its_children(tmp_path):
    # No line ever arrives, so only the timer can end it; the background
    # child (QEMU under vng, say) must die with its parent.
    pidfile = tmp_path / "child.pid"
    start = time.monotonic()
    with pytest.raises(LabError, match="timed out"):
        run_logged(["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"],
                   tmp_path / "x.log", "silent", timeout=1)
    assert time.monotonic() - start < 10
    child = int(pidfile.read_text())
    assert wait_gone(child), f"child {child} survived the timeout"


def test_timeout_kills_plain_silent_command(tmp_path):
    start = time.monotonic()
    with pytest.raises(LabError, match="timed out"):
        run_logged(["sleep", "30"], tmp_path / "x.log", "sleep", timeout=1)
    assert time.monotonic() - start < 10


def test_failure_names_phase_exit_status_and_tail(tmp_path):
    with pytest.raises(LabError) as exc:
        run_logged(["sh", "-c", "echo why it broke; exit 3"], tmp_path / "x.log",
                   "build foo")
    msg = str(exc.value)
    assert msg.startswith("build foo: failed (exit 3)")
    assert "why it broke" in msg


def test_failure_without_check_returns_the_status(tmp_path):
    rc = run_logged(["sh", "-c", "exit 3"], tmp_path / "x.log", "probe", check=False)
    assert rc == 3


def test_every_line_reaches_on_line_and_success_returns_zero(tmp_path):
    seen: list[str] = []
    rc = run_logged(["sh", "-c", "for i in 1 2 3 4 5; do echo line $i; done"],
                    tmp_path / "x.log", "lines", on_line=seen.append, timeout=30)
    assert rc == 0
    assert seen == [f"line {i}\n" for i in range(1, 6)]


def test_log_is_appended_not_overwritten(tmp_path):
    # Phases of one step share a log: the first phase's output must stay.
    log = tmp_path / "x.log"
    run_logged(["echo", "first"], log, "a")
    run_logged(["echo", "second"], log, "b")
    assert log.read_text() == "$ echo first\nfirst\n$ echo second\nsecond\n"


def test_a_missing_directory_is_named_and_not_taken_for_a_missing_program(tmp_path):
    gone = tmp_path / "no-tree"
    with pytest.raises(LabError, match=f"git: no directory {gone} to run in"):
        run_quiet(["git", "status"], cwd=gone)
    with pytest.raises(LabError, match="phase: git: no directory"):
        run_logged(["git", "status"], tmp_path / "log", "phase", cwd=gone)
    with pytest.raises(LabError, match="no-such-program is not installed"):
        run_quiet(["no-such-program"], cwd=tmp_path)
