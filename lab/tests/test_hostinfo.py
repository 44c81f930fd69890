"""Host facts: the KVM probe's verdicts (on captured real logs), its cache,
and the accelerator chosen from it."""
import pytest

from memlab import accel, hostinfo
from memlab.runner import LabError
from conftest import DATA


def test_kvm_probe_that_could_not_start_its_tools_is_an_error_not_a_verdict():
    # Real log: the venv's vng run without the venv on PATH.
    text = (DATA / "kvm-probe-tool-missing.log").read_text()
    with pytest.raises(LabError, match="virtme-run: not found"):
        accel.classify_kvm_probe(text, 127)


def test_kvm_probe_where_qemu_fails_under_kvm_is_a_verdict():
    # Real log from this project's machine: QEMU starts, KVM rejects an MSR.
    text = (DATA / "kvm-probe-qemu-failed.log").read_text()
    ok, evidence = accel.classify_kvm_probe(text, 255)
    assert ok is False
    assert "failed to set MSR" in evidence


def test_kvm_probe_verdicts():
    assert accel.classify_kvm_probe("...\nMEMLAB kvm_probe=42\n", 0)[0] is True
    # A hang before the guest kernel (KVM that stops after the BIOS).
    assert accel.classify_kvm_probe("$ vng --run x\n", None)[0] is False
    assert accel.classify_kvm_probe(
        "qemu-system-x86_64: Could not access KVM kernel module: No such file\n", 1)[0] is False
    assert accel.classify_kvm_probe("[    0.000000] Linux version 6.12.57\n", 1)[0] is False


def test_the_probe_script_prints_the_answer_the_probe_looks_for():
    from memlab import paths
    script = (paths.SCENARIOS / f"{accel.KVM_PROBE_SCRIPT}.sh").read_text()
    assert "MEMLAB kvm_probe=$((6 * 7))" in script
    assert accel.KVM_PROBE_ANSWER == "MEMLAB kvm_probe=42"


def test_stale_kvm_probe_cache_is_not_trusted(monkeypatch, tmp_path):
    cache = tmp_path / "kvm-probe.json"
    monkeypatch.setattr(accel, "KVM_PROBE_CACHE", cache)
    cache.write_text('{"kvm": false, "date": "old format, maybe a tool failure"}')
    assert accel._cached_kvm_verdict() is None
    cache.write_text('{"format": %d, "kvm": true}' % accel.KVM_PROBE_FORMAT)
    assert accel._cached_kvm_verdict() is True


def test_default_accelerator_follows_the_probe(monkeypatch, tmp_path):
    monkeypatch.setattr(accel, "kvm_usable", lambda image: True)
    assert accel.default_accel(tmp_path) == "kvm"
    monkeypatch.setattr(accel, "kvm_usable", lambda image: False)
    assert accel.default_accel(tmp_path) == "tcg"


def test_memlab_accel_overrides_the_probe(monkeypatch, tmp_path):
    monkeypatch.setattr(accel, "_probe_kvm", lambda image: pytest.fail("probed"))
    monkeypatch.setenv("MEMLAB_ACCEL", "tcg")
    assert accel.kvm_usable(tmp_path) is False
    monkeypatch.setenv("MEMLAB_ACCEL", "kvm")
    assert accel.kvm_usable(tmp_path) is True


def test_a_build_dir_without_room_is_refused_before_any_work(monkeypatch, tmp_path):
    monkeypatch.setattr(hostinfo.paths, "BUILD", tmp_path / "build")
    monkeypatch.setattr(hostinfo.paths, "PRISTINE_TREE", tmp_path / "build" / "trees" / "x")
    monkeypatch.setattr(hostinfo, "free_disk_gb", lambda path: 5.0)
    # Cold: nothing unpacked yet, the whole footprint must fit.
    with pytest.raises(LabError, match=r"needs about 14 GB free .* has 5.0 GB"):
        hostinfo.require_build_disk("memlab test", builds=True)
    # Without kernel builds (--quick), or warm: only the run's own writes.
    hostinfo.require_build_disk("memlab test", builds=False)
    (tmp_path / "build" / "trees" / "x").mkdir(parents=True)
    hostinfo.require_build_disk("memlab test", builds=True)
    monkeypatch.setattr(hostinfo, "free_disk_gb", lambda path: 1.5)
    with pytest.raises(LabError, match=r"needs about 2 GB free"):
        hostinfo.require_build_disk("memlab test", builds=False)


def test_free_disk_is_read_from_the_nearest_existing_parent(tmp_path):
    assert hostinfo.free_disk_gb(tmp_path / "not" / "yet") > 0
