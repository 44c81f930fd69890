"""Files on a filesystem mounted with -o dax, for guest scenarios: their
pages are the pmem's own ZONE_DEVICE pages, handed to userspace by shared
mappings, pinned by direct I/O and shared or copied across fork.

  daxfs.py write DIR FILES MIB      FILES files of MIB each, filled through
                                    shared mappings and read back by read()
  daxfs.py placed DIR START BYTES   every page of every file maps to a
                                    physical page in [START, START + BYTES)
  daxfs.py pin DIR BLOCKDEV         each file copied to BLOCKDEV by direct
                                    I/O from its mapping, cleared, and read
                                    back into the mapping the same way
  daxfs.py fork DIR                 shared and private mappings across fork
  daxfs.py sums DIR                 sha256 of each file, read through mappings

Every command prints "MEMLAB key=value" results and exits non-zero, with a
message, on any mismatch.
"""
import ctypes
import hashlib
import mmap
import os
import struct
import sys

from daxio import mapped   # this directory: the scripts run side by side

PAGE = mmap.PAGESIZE
PAGEMAP_PRESENT = 1 << 63
PAGEMAP_PFN_MASK = (1 << 55) - 1


class Mismatch(Exception):
    pass


def files(directory: str) -> list[str]:
    names = sorted(n for n in os.listdir(directory) if n.startswith("memlab-"))
    if not names:
        raise Mismatch(f"no memlab-* files in {directory}")
    return [os.path.join(directory, n) for n in names]


def read_by_syscall(path: str) -> bytes:
    with open(path, "rb", buffering=0) as f:
        return f.read()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(directory: str, count: int, mib: int) -> None:
    size = mib << 20
    for i in range(count):
        path = os.path.join(directory, f"memlab-{i}")
        with open(path, "wb") as f:
            f.truncate(size)
        data = os.urandom(size)
        m = mapped(path)
        m[:] = data          # page faults hand out the pmem's pages
        m.flush()
        m.close()
        if digest(read_by_syscall(path)) != digest(data):
            raise Mismatch(f"{path}: read() returns other data than the mapping wrote")
    print(f"MEMLAB written_files={count} written_mib={count * mib}")


def physical_pages(m: mmap.mmap) -> list[int]:
    """The page frame of each page of a mapping (faulted in first)."""
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    pfns = []
    # Unbuffered: a read-ahead would return entries from before the faults.
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        for offset in range(0, len(m), PAGE):
            _ = m[offset]
            pagemap.seek((base + offset) // PAGE * 8)
            entry, = struct.unpack("<Q", pagemap.read(8))
            if not entry & PAGEMAP_PRESENT:
                raise Mismatch(f"page at offset {offset} not present after a fault")
            pfns.append(entry & PAGEMAP_PFN_MASK)
    return pfns


def placed(directory: str, start: int, size: int) -> None:
    first, last = start // PAGE, (start + size) // PAGE
    pages = 0
    for path in files(directory):
        m = mapped(path)
        outside = [pfn for pfn in physical_pages(m) if not first <= pfn < last]
        pages += len(m) // PAGE
        m.close()
        if outside:
            raise Mismatch(f"{path}: {len(outside)} pages outside the namespace "
                           f"(first pfn {outside[0]:#x}, namespace pfns "
                           f"{first:#x}-{last:#x}): DAX is not in effect")
    print(f"MEMLAB dax_placed_pages={pages}")


def pins_acquired() -> int:
    with open("/proc/vmstat") as vmstat:
        for line in vmstat:
            key, value = line.split()
            if key == "nr_foll_pin_acquired":
                return int(value)
    raise Mismatch("no nr_foll_pin_acquired in /proc/vmstat")


def pin(directory: str, blockdev: str) -> None:
    paths = files(directory)
    pins_before = pins_acquired()
    fd = os.open(blockdev, os.O_RDWR | os.O_DIRECT)
    try:
        offset = 0
        for path in paths:
            # The block layer pins the mapping's pages for each transfer:
            # read from them, then (after they are cleared) written into.
            m = mapped(path)
            expected = digest(m)
            if os.pwrite(fd, m, offset) != len(m):
                raise Mismatch(f"short direct write from {path}")
            m[:] = bytes(len(m))
            if os.preadv(fd, [m], offset) != len(m):
                raise Mismatch(f"short direct read into {path}")
            if digest(m) != expected or digest(read_by_syscall(path)) != expected:
                raise Mismatch(f"{path}: direct I/O through {blockdev} changed the data")
            offset += len(m)
            m.close()
    finally:
        os.close(fd)
    # Pages pinned meanwhile (FOLL_PIN), by the transfers above among others.
    print(f"MEMLAB pinned_files={len(paths)} pinned_pages={pins_acquired() - pins_before}")


def fork(directory: str) -> None:
    path = files(directory)[0]
    shared, private = mapped(path), mapped(path, flags=mmap.MAP_PRIVATE)
    _ = private[0]                            # maps the pmem page read-only
    original_next = bytes(private[PAGE:2 * PAGE])
    pattern = bytes([0xa5]) * PAGE
    pid = os.fork()
    if pid == 0:
        shared[:PAGE] = pattern               # the parent's page, shared
        private[:PAGE] = bytes(PAGE)           # a copy of it, the child's own
        ok = private[:PAGE] == bytes(PAGE) and shared[:PAGE] == pattern
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise Mismatch("the child saw other data in its mappings than it wrote")
    if shared[:PAGE] != pattern or read_by_syscall(path)[:PAGE] != pattern:
        raise Mismatch("the child's store through a shared mapping is not in the file")
    if private[:PAGE] == bytes(PAGE):
        raise Mismatch("the child's private copy leaked into the parent's mapping")
    private[PAGE:2 * PAGE] = bytes(PAGE)      # the parent's own copy
    if read_by_syscall(path)[PAGE:2 * PAGE] != original_next:
        raise Mismatch("a store through a private mapping reached the file")
    shared.close()
    private.close()
    print("MEMLAB fork_checked=1")


def sums(directory: str) -> None:
    parts = []
    for path in files(directory):
        m = mapped(path)
        parts.append(digest(m))
        m.close()
    print(f"MEMLAB files_sha256={digest(' '.join(parts).encode())}")


def main(argv: list[str]) -> int:
    commands = {
        "write": (3, lambda a: write(a[0], int(a[1]), int(a[2]))),
        "placed": (3, lambda a: placed(a[0], int(a[1], 0), int(a[2], 0))),
        "pin": (2, lambda a: pin(a[0], a[1])),
        "fork": (1, lambda a: fork(a[0])),
        "sums": (1, lambda a: sums(a[0])),
    }
    if not argv or argv[0] not in commands or len(argv) - 1 != commands[argv[0]][0]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        commands[argv[0]][1](argv[1:])
    except (Mismatch, OSError) as e:
        print(f"daxfs.py {argv[0]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
