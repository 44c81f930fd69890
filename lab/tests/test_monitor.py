"""The QMP client against a stand-in monitor on a Unix socket."""
import json
import socket
import threading

import pytest

from memlab import monitor
from memlab.runner import LabError


def fake_qemu(path, answers):
    """A monitor that greets, then answers each command in turn from
    answers (after an event, as QEMU may send one), recording them."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    seen = []

    def serve():
        conn, _ = server.accept()
        with conn, conn.makefile("rw") as stream:
            stream.write(json.dumps({"QMP": {"version": {}}}) + "\n")
            stream.flush()
            for answer in answers:
                seen.append(json.loads(stream.readline()))
                stream.write(json.dumps({"event": "MEMORY_DEVICE_SIZE_CHANGE"}) + "\n")
                stream.write(json.dumps(answer) + "\n")
                stream.flush()
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return seen, thread


def test_a_request_line_sets_the_devices_requested_size(tmp_path):
    sock = tmp_path / "qmp.sock"
    seen, thread = fake_qemu(sock, [{"return": {}}, {"return": {}}])
    mon = monitor.Monitor(sock)
    mon.on_line("[   12.3] some kernel line\n")
    mon.on_line("MEMLAB virtio_mem_request=1073741824\n")
    thread.join(5)
    assert seen == [{"execute": "qmp_capabilities"},
                    {"execute": "qom-set",
                     "arguments": {"path": monitor.VIRTIO_MEM_DEVICE,
                                   "property": "requested-size", "value": 1 << 30}}]
    assert mon.requests == [1 << 30]


def test_a_refused_command_is_a_clear_error(tmp_path):
    sock = tmp_path / "qmp.sock"
    fake_qemu(sock, [{"return": {}}, {"error": {"desc": "requested-size too big"}}])
    with pytest.raises(LabError, match="QEMU refused qom-set: requested-size too big"):
        monitor.Monitor(sock).on_line("MEMLAB virtio_mem_request=1\n")


def test_no_monitor_is_a_clear_error(tmp_path):
    with pytest.raises(LabError, match="QEMU's monitor at"):
        monitor.Monitor(tmp_path / "none.sock").on_line("MEMLAB virtio_mem_request=0\n")
