"""Guest command lines and memory checks (no boot)."""
import pytest

from memlab import accel, guest, hostinfo
from memlab.runner import LabError


def test_pmem_layout_reserves_region_above_4g(monkeypatch):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    total, append = guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=4))
    assert total == 9
    assert append == ["memmap=4G!4G"]


def test_pmem_layout_refuses_more_than_the_host_has(monkeypatch):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 8.0)
    with pytest.raises(LabError, match="host has 8.0 GB available"):
        guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=16))


def test_icount_uses_one_vcpu_and_tcg(monkeypatch, tmp_path):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    spec = guest.GuestSpec(script="hello", accel="tcg-icount", cpus=2)
    cmd = guest.vng_command(spec, tmp_path / "bzImage")
    assert cmd[cmd.index("--cpus") + 1] == "1"
    assert "-icount shift=0,sleep=off" in cmd
    assert "--disable-kvm" in cmd


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(LabError, match="unknown scenario 'nope'"):
        guest.script_path("nope")


def test_build_product_paths_resolve_per_variant():
    from memlab import paths
    from memlab.scenario import resolve_env
    env = resolve_env({"MODULE": "@out/lib/test_hmm.ko", "LOADS": "3"}, "base")
    assert env == {"MODULE": str(paths.out_dir("x86_64", "base", "lab") / "lib/test_hmm.ko"),
                   "LOADS": "3"}


def test_guest_boots_and_probe_run_virtme_ng_with_the_venv_on_path(monkeypatch, tmp_path):
    from memlab import deps, paths
    seen = []

    def fake_run_logged(cmd, log, phase, **kw):
        seen.append((cmd[0], kw.get("env", {}).get("PATH", "")))
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("MEMLAB kvm_probe=42\n")
        return 0

    monkeypatch.setattr(guest, "run_logged", fake_run_logged)
    monkeypatch.setattr(accel, "run_logged", fake_run_logged)
    monkeypatch.setattr(guest, "require_guest_tools", lambda: None)
    monkeypatch.setattr(deps, "ensure_virtme_ng", lambda: None)
    monkeypatch.setattr(paths, "LOGS", tmp_path)
    monkeypatch.setattr(paths, "out_dir", lambda *args: tmp_path)
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    image = tmp_path / "arch/x86/boot/bzImage"
    image.parent.mkdir(parents=True)
    image.write_text("")
    assert accel._probe_kvm(image)[0] is True
    assert guest.boot_and_run(guest.GuestSpec(script="hello")).exit_code == 0
    venv_bin = str(paths.VENV / "bin")
    assert len(seen) == 2
    assert all(cmd == deps.vng_path() and path.split(":")[0] == venv_bin
               for cmd, path in seen)


def test_bare_boot_runs_the_kernel_alone_and_exits_at_reset(tmp_path):
    from memlab import kunit_runner
    spec = guest.GuestSpec(arch="arm64", cpus=1, append=kunit_runner.run_suites_at_boot("arm64"))
    cmd = guest.bare_command(spec, tmp_path / "Image")
    assert cmd[0] == "qemu-system-aarch64"
    assert "-no-reboot" in cmd and "-nodefaults" in cmd
    assert cmd[cmd.index("-kernel") + 1] == str(tmp_path / "Image")
    append = cmd[cmd.index("-append") + 1].split()
    assert append[0] == "console=ttyAMA0"
    assert "kunit.enable=1" in append and "kunit_shutdown=reboot" in append


def test_a_compile_test_arch_is_not_booted(tmp_path):
    with pytest.raises(LabError, match="i386 kernels are built, not booted"):
        guest.bare_command(guest.GuestSpec(arch="i386"), tmp_path / "bzImage")


def test_cross_builds_name_their_toolchain(tmp_path):
    from memlab import build
    args = build.make_args("arm64", tmp_path)
    assert "ARCH=arm64" in args and "CROSS_COMPILE=aarch64-linux-gnu-" in args
    assert "CC=ccache aarch64-linux-gnu-gcc" in args
    assert not any(a.startswith("CROSS_COMPILE") for a in build.make_args("x86_64", tmp_path))


def test_the_callers_accelerator_is_obeyed(monkeypatch, tmp_path):
    # The guest layer boots what it is told: no probe, no fallback.
    monkeypatch.setattr(accel, "kvm_usable", lambda image: pytest.fail("probed"))
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    cmd = guest.vng_command(guest.GuestSpec(script="hello", accel="tcg"), tmp_path / "bzImage")
    assert "--disable-kvm" in cmd and "--qemu-opts" not in cmd
    cmd = guest.vng_command(guest.GuestSpec(script="hello", accel="kvm"), tmp_path / "bzImage")
    assert "--disable-kvm" not in cmd
    with pytest.raises(LabError, match="unknown accelerator 'qemu'"):
        guest.vng_command(guest.GuestSpec(script="hello", accel="qemu"), tmp_path / "bzImage")


def test_a_cpu_model_comes_after_virtme_ngs_own(monkeypatch, tmp_path):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    cmd = guest.vng_command(guest.GuestSpec(script="hello", accel="tcg",
                                            cpu="max,vendor=GenuineIntel"), tmp_path / "bzImage")
    # One argument each: --qemu-opts would swallow the rest of the line.
    assert cmd[cmd.index("--qemu-opt=-cpu") + 1] == "--qemu-opt=max,vendor=GenuineIntel"
    cmd = guest.vng_command(guest.GuestSpec(script="hello", accel="tcg"), tmp_path / "bzImage")
    assert not any(a.startswith("--qemu-opt=") for a in cmd)


def test_every_accelerator_has_a_bench_mode_and_a_label():
    assert set(guest.MODES) == {"icount", "wall", "kvm"}
    assert {a.name for a in guest.MODES.values()} == set(guest.ACCELS)
    assert all("emulated" in a.label for a in guest.ACCELS.values() if a.name != "kvm")


def test_pmem_regions_are_kept_apart_by_ram(monkeypatch):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    total, append = guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=4,
                                                        pmem_regions=2))
    assert total == 9
    assert append == ["memmap=2G!4G", "memmap=2G!7G"]


def test_pmem_regions_must_split_and_fit(monkeypatch):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    with pytest.raises(LabError, match="does not split into 2 regions"):
        guest.memory_layout(guest.GuestSpec(memory_gb=5, pmem_gb=3, pmem_regions=2))
    with pytest.raises(LabError, match="3 pmem regions need --memory >= 4"):
        guest.memory_layout(guest.GuestSpec(memory_gb=3, pmem_gb=3, pmem_regions=3))


def test_wall_guests_keep_their_vcpus():
    assert guest.vcpus(guest.GuestSpec(accel="tcg", cpus=2)) == 2
    assert guest.vcpus(guest.GuestSpec(accel="tcg-icount", cpus=2)) == 1


def test_a_long_list_of_problems_is_cut_short():
    from memlab.guest import brief
    assert brief(["a", "b"]) == "a; b"
    assert brief([str(i) for i in range(8)], shown=3) == "0; 1; 2; and 5 more"


def test_sparc64_bare_boot_takes_one_cpu_and_powers_off(tmp_path):
    from memlab import kunit_runner
    spec = guest.GuestSpec(arch="sparc64", cpus=2,
                           append=kunit_runner.run_suites_at_boot("sparc64"))
    cmd = guest.bare_command(spec, tmp_path / "image")
    assert cmd[:3] == ["qemu-system-sparc64", "-machine", "sun4u"]
    assert cmd[cmd.index("-smp") + 1] == "1"
    assert "kunit_shutdown=poweroff" in cmd[cmd.index("-append") + 1].split()


def test_numa_nodes_share_all_memory_and_name_cpus_the_guest_has(monkeypatch, tmp_path):
    from memlab import catalog
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    spec = catalog.get("numa-pmem").spec("patched", "debian")
    cmd = guest.vng_command(spec, tmp_path / "bzImage")
    numa = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--numa"]
    assert numa == ["2G,cpus=0-1", "2G,cpus=2-3", "2G"]
    # A socket per node with CPUs, after virtme-ng's own -smp.
    assert cmd[cmd.index("--qemu-opt=-smp") + 1] == "--qemu-opt=4,sockets=2,cores=2,threads=1"
    assert cmd[cmd.index("--memory") + 1] == "6G" and cmd[cmd.index("--cpus") + 1] == "4"
    # The regions fall on nodes 1 and 2: 4-5 GB and, past the gap, 6-7 GB.
    assert "memmap=1G!4G" in cmd and "memmap=1G!6G" in cmd
    with pytest.raises(LabError, match="NUMA nodes hold 4 GB, the guest has 6 GB"):
        guest.numa_args(guest.GuestSpec(memory_gb=4, pmem_gb=2,
                                        numa=(guest.NumaNode(2, "0"), guest.NumaNode(2))), 6)
    with pytest.raises(LabError, match="name CPU 3, the guest has 2 vCPUs"):
        guest.numa_args(guest.GuestSpec(numa=(guest.NumaNode(2, "2-3"),)), 2)
    assert guest.numa_args(guest.GuestSpec(), 2) == []


def test_numa_cpus_must_split_into_sockets_and_exist_under_icount():
    nodes = (guest.NumaNode(2, "0-1"), guest.NumaNode(2, "2"))
    with pytest.raises(LabError, match="3 vCPUs do not split into 2 sockets"):
        guest.numa_args(guest.GuestSpec(cpus=3, numa=nodes), 4)
    with pytest.raises(LabError, match="the guest has 1 vCPUs"):
        guest.numa_args(guest.GuestSpec(cpus=4, accel="tcg-icount", numa=nodes), 4)


def test_a_virtio_mem_guest_gets_room_for_the_device_and_a_monitor(monkeypatch, tmp_path):
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 23.0)
    spec = guest.GuestSpec(script="hello", accel="tcg", memory_gb=3, virtio_mem_gb=2)
    cmd = guest.vng_command(spec, tmp_path / "bzImage", tmp_path / "qmp.sock")
    opts = [a.removeprefix("--qemu-opt=") for a in cmd if a.startswith("--qemu-opt=")]
    assert opts[opts.index("-m") + 1] == "3G,maxmem=5G"
    assert "virtio-mem-pci,id=memlab-vmem0,memdev=memlab-vmem0-ram,requested-size=0" in opts
    assert f"unix:{tmp_path / 'qmp.sock'},server=on,wait=off" in opts
    with pytest.raises(LabError, match="needs a monitor socket"):
        guest.vng_command(spec, tmp_path / "bzImage")
    monkeypatch.setattr(hostinfo, "available_gb", lambda: 5.0)
    with pytest.raises(LabError, match=r"virtio-mem 2\) and the host has 5.0 GB"):
        guest.memory_layout(spec)
