"""Device DAX data check for guest scenarios: /dev/daxX.Y supports only
mmap, in whole multiples of the device's alignment (MAPLEN).

  daxio.py write DEV FILE MAPLEN   copy FILE to the start of DEV
  daxio.py sum DEV BYTES MAPLEN    print the sha256 of DEV's first BYTES
"""
import hashlib
import mmap
import os
import sys


def mapped(dev: str, length: int) -> mmap.mmap:
    fd = os.open(dev, os.O_RDWR)
    try:
        return mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


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
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
