"""Running long host commands: full log on disk, progress on the terminal."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, Mapping, Sequence


class LabError(Exception):
    """A failure the user must see: printed without a traceback, exit 1."""


class Timeout(LabError):
    """A command that ran out of time (and was killed)."""


def say(msg: str) -> None:
    print(f"[memlab] {msg}", flush=True)


def tail(path: Path, lines: int = 40) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=lines))
    except OSError:
        return ""


def run_logged(
    cmd: Sequence[str],
    log: Path,
    phase: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    expected_lines: int | None = None,
    on_line: Callable[[str], None] | None = None,
    tail_lines: int = 40,
    check: bool = True,
) -> int:
    """Run cmd with stdout+stderr appended to log (through a pipe).

    Prints a progress line every 15 s: phase, elapsed time, lines so far
    (and a percentage when the caller can estimate the total). On failure
    (or timeout) raises LabError carrying the log's last lines.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    count = 0
    done = threading.Event()

    def report_progress() -> None:
        # A thread, so that silent phases (a guest's boot) show too.
        while not done.wait(15):
            pct = ""
            if expected_lines:
                pct = f", ~{min(99, 100 * count // expected_lines)}%"
            print(f"[memlab] {phase}: {time.monotonic() - start:5.0f}s elapsed, "
                  f"{count} lines{pct}", flush=True)

    with open(log, "a", errors="replace") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            proc = subprocess.Popen(
                list(cmd), cwd=cwd, env=dict(env) if env is not None else None,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1,
                start_new_session=True)
        except FileNotFoundError:
            done.set()
            raise LabError(f"{phase}: {_missing(cmd, cwd)}") from None
        assert proc.stdout is not None
        killed = threading.Event()

        def kill() -> None:
            # The whole group: vng's QEMU child would keep the pipe open.
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        # A silent hang produces no lines, so the deadline needs its own timer.
        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        reporter = threading.Thread(target=report_progress, daemon=True)
        reporter.start()
        try:
            for line in proc.stdout:
                out.write(line)
                out.flush()  # complete even if memlab itself is killed
                count += 1
                if on_line:
                    on_line(line)
            rc = proc.wait()
        except BaseException:
            kill()  # Ctrl-C: the child runs in its own session, stop it too
            raise
        finally:
            done.set()
            if timer:
                timer.cancel()
    timed_out = killed.is_set()
    elapsed = time.monotonic() - start
    if timed_out:
        raise Timeout(f"{phase}: timed out after {elapsed:.0f}s; last lines of "
                       f"{log}:\n{tail(log, tail_lines)}")
    if rc != 0 and check:
        raise LabError(f"{phase}: failed (exit {rc}) after {elapsed:.0f}s; "
                       f"last {tail_lines} lines of {log}:\n{tail(log, tail_lines)}")
    say(f"{phase}: done in {elapsed:.0f}s (log: {log})")
    return rc


def _missing(cmd: Sequence[str], cwd: Path | None) -> str:
    """What a FileNotFoundError of running @cmd in @cwd means: the directory
    or the program is missing."""
    if cwd is not None and not Path(cwd).is_dir():
        return f"{cmd[0]}: no directory {cwd} to run in"
    return f"{cmd[0]} is not installed (or not on PATH)"


def run_quiet(cmd: Sequence[str], cwd: Path | None = None,
              env: Mapping[str, str] | None = None, input: str | None = None,
              check: bool = True) -> subprocess.CompletedProcess[str]:
    """Short commands whose output the caller parses. A missing program is
    a LabError naming it, as is a failure when check is set."""
    try:
        res = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True,
                             env=dict(env) if env is not None else None, input=input)
    except FileNotFoundError:
        raise LabError(_missing(cmd, cwd)) from None
    if check and res.returncode != 0:
        raise LabError(f"command failed ({res.returncode}): {' '.join(cmd)}\n"
                       f"{res.stdout}{res.stderr}")
    return res


def stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
