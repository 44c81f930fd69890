"""QEMU's monitor (QMP) of a running guest, for what a guest script asks of
its machine: a virtio-mem device resized at run time. The script asks by a
console line, "MEMLAB virtio_mem_request=BYTES"; the host sets the device's
requested-size, and the script watches its memory change."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

from .runner import LabError, say

VIRTIO_MEM_DEVICE = "memlab-vmem0"
_REQUEST = re.compile(r"^MEMLAB virtio_mem_request=(?P<bytes>\d+)\s*$")
# QEMU answers at once; a slow host may take a moment to accept.
QMP_TIMEOUT_S = 30


class Monitor:
    """A QMP client on QEMU's monitor socket, acting on the guest's requests
    as its console lines go by (on_line())."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[int] = []

    def execute(self, command: str, arguments: dict[str, Any] | None = None) -> Any:
        """One QMP command on a fresh connection: its return value."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(QMP_TIMEOUT_S)
                sock.connect(str(self.path))
                stream = sock.makefile("rw")
                self._reply(stream)                           # the greeting
                for execute, args in (("qmp_capabilities", None), (command, arguments)):
                    request: dict[str, Any] = {"execute": execute}
                    if args:
                        request["arguments"] = args
                    stream.write(json.dumps(request) + "\n")
                    stream.flush()
                    reply = self._reply(stream)
                    if "error" in reply:
                        raise LabError(f"QEMU refused {execute}: {reply['error'].get('desc')}")
                return reply.get("return")
        except OSError as e:
            raise LabError(f"QEMU's monitor at {self.path}: {e}") from None

    @staticmethod
    def _reply(stream: Any) -> dict[str, Any]:
        """The next line that is not an event."""
        while True:
            line = stream.readline()
            if not line:
                raise LabError("QEMU closed its monitor")
            reply: dict[str, Any] = json.loads(line)
            if "event" not in reply:
                return reply

    def on_line(self, line: str) -> None:
        m = _REQUEST.match(line.strip())
        if not m:
            return
        size = int(m.group("bytes"))
        self.execute("qom-set", {"path": VIRTIO_MEM_DEVICE, "property": "requested-size",
                                 "value": size})
        self.requests.append(size)
        say(f"virtio-mem {VIRTIO_MEM_DEVICE}: requested-size {size >> 20} MiB")
