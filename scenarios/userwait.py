"""A user's wait, marked on the guest kernel's clock for the bench.

  userwait.py run ROOT COMMAND [ARG...]
                                      run COMMAND, chrooted in ROOT, between
                                      the marks wait_starts and wait_ends
  userwait.py memtotal BYTES KB TIMEOUT_S
                                      mark wait_starts, ask the host for a
                                      virtio-mem size
                                      ("MEMLAB virtio_mem_request=BYTES";
                                      the host sets the device's
                                      requested-size through QEMU's monitor),
                                      then read MemTotal every millisecond
                                      until it is at least KB and mark
                                      wait_ends

Each mark ("memlab: mark NAME idle_ns=N" in /dev/kmsg) carries the time
the CPUs had been idle when it was written (/proc/timer_list): how long
the guest idled inside the wait is the difference. One process reads,
marks and waits, and reads no file from the host inside the wait (the
guest's files are the host's, over 9p)."""
import os
import subprocess
import sys
import time

POLL_S = 0.001


def idle_ns() -> int:
    """Nanoseconds every CPU has been idle (NO_HZ's accounting)."""
    total = 0
    with open("/proc/timer_list") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name.strip() in (".idle_sleeptime", ".iowait_sleeptime"):
                total += int(value.split()[0])
    return total


def mark(name: str, idle: int) -> None:
    with open("/dev/kmsg", "w") as kmsg:
        kmsg.write(f"memlab: mark {name} idle_ns={idle}\n")


def mem_total_kb(meminfo: int) -> int:
    """MemTotal, from /proc/meminfo open as @meminfo (its first line)."""
    return int(os.pread(meminfo, 64, 0).split()[1])


def run(root: str, command: list[str]) -> int:
    def enter_root() -> None:
        os.chroot(root)
        os.chdir("/")

    mark("wait_starts", idle_ns())
    code = subprocess.call(command, stdout=subprocess.DEVNULL, preexec_fn=enter_root)
    mark("wait_ends", idle_ns())
    return code


def memtotal(size: int, want_kb: int, timeout_s: int) -> int:
    meminfo = os.open("/proc/meminfo", os.O_RDONLY)
    mark("wait_starts", idle_ns())
    print(f"MEMLAB virtio_mem_request={size}", flush=True)
    deadline = time.monotonic() + timeout_s
    while mem_total_kb(meminfo) < want_kb:
        if time.monotonic() > deadline:
            print(f"MEMLAB memtotal_kb={mem_total_kb(meminfo)} want_kb={want_kb}",
                  flush=True)
            return 1
        time.sleep(POLL_S)
    mark("wait_ends", idle_ns())
    print(f"MEMLAB memtotal_kb={mem_total_kb(meminfo)}", flush=True)
    return 0


def main() -> int:
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 3:
        return run(sys.argv[2], sys.argv[3:])
    if sys.argv[1:2] == ["memtotal"] and len(sys.argv) == 5:
        return memtotal(*(int(a) for a in sys.argv[2:5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
