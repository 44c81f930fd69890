"""Device DAX data check for guest scenarios: /dev/daxX.Y supports only
mmap, in whole multiples of the device's alignment (MAPLEN).

  daxio.py write DEV FILE MAPLEN   copy FILE to the start of DEV
  daxio.py sum DEV BYTES MAPLEN    print the sha256 of DEV's first BYTES
  daxio.py fork DEV MAPLEN         a mapping held across fork: the child
                                   reads and writes the parent's pages by
                                   get_user_pages(); then restored
"""
import ctypes
import hashlib
import mmap
import os
import sys


def mapped(path: str, length: int = 0, flags: int = mmap.MAP_SHARED) -> mmap.mmap:
    """A read-write mapping of a device (length: a multiple of its
    alignment) or of a whole file (length 0)."""
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, length, flags, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


def fork(dev: str, length: int) -> int:
    """The child reads and writes the parent's mapping through
    /proc/PID/mem: get_user_pages() on the device's pages, from another
    process, while both hold the mapping."""
    m = mapped(dev, length)
    # The mapping's last page: not the range's first, which the kernel
    # initializes apart from the rest.
    page = slice(length - mmap.PAGESIZE, length)
    address = ctypes.addressof(ctypes.c_char.from_buffer(m)) + page.start
    original = bytes(m[page])
    pattern = bytes(b ^ 0xff for b in original)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        with open(f"/proc/{parent}/mem", "r+b", buffering=0) as mem:
            mem.seek(address)
            seen = mem.read(mmap.PAGESIZE)
            mem.seek(address)
            mem.write(pattern)
        os._exit(0 if seen == original else 1)    # exits with the mapping held
    _, status = os.waitpid(pid, 0)
    seen = bytes(m[page])
    m[page] = original
    m.close()
    if os.waitstatus_to_exitcode(status) != 0 or seen != pattern:
        print(f"daxio.py fork: the child read or wrote other data through the "
              f"parent's mapping of {dev}", file=sys.stderr)
        return 1
    print("MEMLAB fork_checked=1")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "write":
        data = open(argv[2], "rb").read()
        m = mapped(argv[1], int(argv[3]))
        m[: len(data)] = data   # device DAX stores go straight to the media
        m.close()
        return 0
    if len(argv) == 4 and argv[0] == "sum":
        length = int(argv[2])
        m = mapped(argv[1], int(argv[3]))
        print(hashlib.sha256(m[:length]).hexdigest())
        m.close()
        return 0
    if len(argv) == 3 and argv[0] == "fork":
        return fork(argv[1], int(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
