"""Guest command lines and memory checks (no boot)."""
import pytest

from memlab import guest
from memlab.runner import LabError


def test_pmem_layout_reserves_region_above_4g(monkeypatch):
    monkeypatch.setattr(guest, "host_available_gb", lambda: 23.0)
    total, append = guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=4))
    assert total == 9
    assert append == ["memmap=4G!4G"]


def test_pmem_layout_refuses_more_than_the_host_has(monkeypatch):
    monkeypatch.setattr(guest, "host_available_gb", lambda: 8.0)
    with pytest.raises(LabError, match="host has 8.0 GB available"):
        guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=16))


def test_icount_uses_one_vcpu_and_tcg(monkeypatch, tmp_path):
    monkeypatch.setattr(guest, "host_available_gb", lambda: 23.0)
    spec = guest.GuestSpec(script="hello", icount=True, cpus=2)
    cmd = guest.vng_command(spec, tmp_path / "bzImage", use_kvm=False)
    assert cmd[cmd.index("--cpus") + 1] == "1"
    assert "-icount shift=0,sleep=off" in cmd
    assert "--disable-kvm" in cmd


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(LabError, match="unknown scenario 'nope'"):
        guest.script_path("nope")


def test_build_product_paths_resolve_per_variant():
    from memlab import paths
    from memlab.scenarios import resolve_env
    env = resolve_env({"MODULE": "@out/lib/test_hmm.ko", "LOADS": "3"}, "base")
    assert env == {"MODULE": str(paths.out_dir("x86_64", "base", "lab") / "lib/test_hmm.ko"),
                   "LOADS": "3"}
