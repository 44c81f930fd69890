"""A user's wait, marked on the guest kernel's clock for the bench.

  userwait.py run COMMAND [ARG...]    run COMMAND between the marks
                                      wait_starts and wait_ends
  userwait.py memtotal BYTES KB TIMEOUT_S
                                      ask the host for a virtio-mem size
                                      ("MEMLAB virtio_mem_request=BYTES";
                                      the host sets the device's
                                      requested-size through QEMU's monitor),
                                      then read MemTotal every millisecond
                                      until it is KB and mark wait_ends

Each mark ("memlab: mark NAME idle_ns=N" in /dev/kmsg) carries the time
the CPUs have been idle so far (/proc/timer_list), read just before the
start mark and just after the end mark: the idle time inside the wait is
their difference: the time the guest waited for the host (its files
are the host's, over 9p), which the bench leaves out of the wait. One
process reads, marks and waits: no fork or exec between a read and its
mark."""
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


def mem_total_kb() -> int:
    with open("/proc/meminfo") as f:
        return int(f.readline().split()[1])


def run(command: list[str]) -> int:
    mark("wait_starts", idle_ns())
    code = subprocess.call(command, stdout=subprocess.DEVNULL)
    idle = idle_ns()
    mark("wait_ends", idle)
    return code


def memtotal(size: int, want_kb: int, timeout_s: int) -> int:
    print(f"MEMLAB virtio_mem_request={size}", flush=True)
    deadline = time.monotonic() + timeout_s
    while mem_total_kb() != want_kb:
        if time.monotonic() > deadline:
            print(f"MEMLAB memtotal_kb={mem_total_kb()} want_kb={want_kb}", flush=True)
            return 1
        time.sleep(POLL_S)
    mark("wait_ends", idle_ns())
    print(f"MEMLAB memtotal_kb={want_kb}", flush=True)
    return 0


def main() -> int:
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 2:
        return run(sys.argv[2:])
    if sys.argv[1:2] == ["memtotal"] and len(sys.argv) == 5:
        return memtotal(*(int(a) for a in sys.argv[2:5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
