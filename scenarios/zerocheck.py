"""Zeroing checks for guest scenarios.

  zerocheck.py dirty MIB          fill MIB of anonymous memory with a pattern
                                  and free it, so later allocations get dirty
                                  pages unless the kernel zeroes them
  zerocheck.py alloc N            set the 2 MB hugetlb pool to N pages; the
                                  time of that one write() (the kernel
                                  allocates and zeroes synchronously in it)
                                  is printed as hugetlb_alloc_ns
  zerocheck.py file PATH BYTES    PATH (e.g. on hugetlbfs) reads zero; prints
                                  MEMLAB lines
  zerocheck.py thp MIB            fault in MIB of THP-backed anonymous memory
                                  and check it reads zero
  zerocheck.py gigantic PATH BYTES fault|fallocate
                                  PATH on a 1 GB hugetlbfs: get its pages
                                  zeroed by one write fault in the middle
                                  (timed as gigantic_fault_ns) or by
                                  fallocate() (gigantic_fallocate_ns), check
                                  they read zero, then dirty them for the
                                  next round and remove the file
"""
import mmap
import os
import sys
import time

CHUNK = 1 << 21


def say(**kv: object) -> None:
    print("MEMLAB " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


def first_nonzero(buf: mmap.mmap, length: int) -> int:
    zero = bytes(CHUNK)
    for off in range(0, length, CHUNK):
        piece = buf[off:off + CHUNK]
        if piece != zero[: len(piece)]:
            return off + next(i for i, b in enumerate(piece) if b)
    return -1


def dirty(mib: int) -> int:
    m = mmap.mmap(-1, mib << 20, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pattern = b"\xa5" * CHUNK
    for off in range(0, mib << 20, CHUNK):
        m[off:off + CHUNK] = pattern
    m.close()
    say(dirtied_mib=mib)
    return 0


def alloc_hugetlb(pages: int) -> int:
    # Open and format first: only the write() is inside the timed window,
    # no fork/exec (whose page cache reads go over 9p, on host time).
    fd = os.open("/proc/sys/vm/nr_hugepages", os.O_WRONLY)
    data = f"{pages}\n".encode()
    try:
        start = time.perf_counter_ns()
        os.write(fd, data)
        elapsed = time.perf_counter_ns() - start
    finally:
        os.close(fd)
    say(hugepages_requested=pages, hugetlb_alloc_ns=elapsed)
    return 0


def check_file(path: str, length: int) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.ftruncate(fd, length)
        m = mmap.mmap(fd, length, mmap.MAP_SHARED)
    finally:
        os.close(fd)
    bad = first_nonzero(m, length)
    m.close()
    say(file_bytes=length, file_first_nonzero=bad)
    return 0 if bad < 0 else 1


def anon_thp_bytes() -> int:
    """Anonymous THP memory in use, system-wide (a minimal kernel has no
    smaps and no event counters, but always this node statistic)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1]) * 1024
    return 0


def check_thp(mib: int) -> int:
    length = mib << 20
    before = anon_thp_bytes()
    # Private: shared anonymous memory is shmem, which THP leaves alone.
    m = mmap.mmap(-1, length + CHUNK, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        pass    # no madvise() in this kernel: the script set THP to "always"
    for off in range(0, length + CHUNK, 4096):
        m[off] = 0                      # write faults (zeros): THPs where aligned
    huge = anon_thp_bytes() - before
    bad = first_nonzero(m, length + CHUNK)
    m.close()
    say(thp_bytes=huge, thp_first_nonzero=bad)
    return 0 if bad < 0 and huge > 0 else 1


def gigantic(path: str, length: int, how: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.ftruncate(fd, length)
        if how == "fallocate":
            start = time.perf_counter_ns()
            os.posix_fallocate(fd, 0, length)
            say(gigantic_fallocate_ns=time.perf_counter_ns() - start)
        m = mmap.mmap(fd, length, mmap.MAP_SHARED)
    finally:
        os.close(fd)
    if how == "fault":
        start = time.perf_counter_ns()
        m[length // 2] = 0      # zeroes the page; the pages near here last
        say(gigantic_fault_ns=time.perf_counter_ns() - start)
    bad = first_nonzero(m, length)
    pattern = b"\xa5" * CHUNK  # the next round's page comes back dirty
    for off in range(0, length, CHUNK):
        m[off:off + CHUNK] = pattern
    m.close()
    os.unlink(path)
    say(gigantic_how=how, gigantic_first_nonzero=bad)
    return 0 if bad < 0 else 1


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "dirty":
        return dirty(int(argv[1]))
    if len(argv) == 2 and argv[0] == "alloc":
        return alloc_hugetlb(int(argv[1]))
    if len(argv) == 3 and argv[0] == "file":
        return check_file(argv[1], int(argv[2]))
    if len(argv) == 2 and argv[0] == "thp":
        return check_thp(int(argv[1]))
    if len(argv) == 4 and argv[0] == "gigantic" and argv[3] in ("fault", "fallocate"):
        return gigantic(argv[1], int(argv[2]), argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
