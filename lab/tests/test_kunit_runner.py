"""Counting kunit.py's JSON results (captured from a real run)."""
import json
import subprocess

from memlab import kunit_runner
from conftest import DATA


def load() -> dict:
    return json.loads((DATA / "kunit-pass.json").read_text())


def test_counts_every_case_including_parameterized_ones():
    res = kunit_runner.count(load())
    assert (res.passed, res.failed, res.skipped) == (17, 0, 0)
    assert res.suites == ["memmap_init_zone_device", "memmap_init"]
    assert res.ok


def test_a_failed_case_is_named():
    report = load()
    report["sub_groups"][1]["test_cases"][0]["status"] = "FAIL"
    res = kunit_runner.count(report)
    assert res.failed == 1 and not res.ok
    assert res.failures == ["memmap_init.init_single_page_state (FAIL)"]


def test_no_test_is_not_ok():
    res = kunit_runner.count({"name": "x", "sub_groups": [], "test_cases": []})
    assert res.total == 0 and not res.ok
    assert "no test ran" in res.summary()


ALL_SUITES = ("CONFIG_MEMMAP_INIT_KUNIT_TEST=y\nCONFIG_ZONE_DEVICE=y\nCONFIG_DEVICE_PRIVATE=y\n"
              "CONFIG_64BIT=y\nCONFIG_CLEAR_PAGES_KUNIT_TEST=y\n")


def test_built_in_run_has_every_suite_of_the_series():
    # kunit.py parse's JSON for a lab kernel's console (memlab kunit --config lab).
    res = kunit_runner.count(json.loads((DATA / "kunit-built-in-lab.json").read_text()))
    res.require_suites(kunit_runner.expected_suites(ALL_SUITES, kunit_runner.SUITES))
    assert (res.passed, res.failed, res.skipped) == (132, 0, 0)
    assert sorted(res.suites) == sorted(kunit_runner.SUITES)
    assert res.ok


def test_a_suite_that_did_not_run_fails_the_run():
    res = kunit_runner.count(load())   # an older run: four suites missing
    res.require_suites(kunit_runner.expected_suites(ALL_SUITES, kunit_runner.SUITES))
    assert res.failed == 4 and not res.ok
    assert res.failures == ["memmap_init_hotplug (suite did not run)",
                            "memmap_init_boot (suite did not run)",
                            "memmap_init_to_buddy (suite did not run)",
                            "clear_pages (suite did not run)"]


def test_a_deferring_kernel_must_defer_at_boot():
    booted = (DATA / "bare-arm64-deferred.log").read_text()
    defers = "CONFIG_SPARSEMEM=y\nCONFIG_DEFERRED_STRUCT_PAGE_INIT=y\n"
    assert kunit_runner.deferred_init_untested(defers, booted) is None
    assert kunit_runner.deferred_init_untested("# CONFIG_DEFERRED_STRUCT_PAGE_INIT is not set\n",
                                               "") is None
    no_deferral = booted.replace("node 0 deferred pages initialised", "node 0 ready")
    assert "went untested" in kunit_runner.deferred_init_untested(defers, no_deferral)


def test_suites_expected_follow_the_kernels_config():
    sparc64 = "CONFIG_MEMMAP_INIT_KUNIT_TEST=y\nCONFIG_64BIT=y\nCONFIG_CLEAR_PAGES_KUNIT_TEST=y\n"
    every = kunit_runner.SUITES
    assert kunit_runner.expected_suites(sparc64, every) == ["memmap_init", "memmap_init_hotplug",
                                                            "memmap_init_boot",
                                                            "memmap_init_to_buddy", "clear_pages"]
    # ZONE_DEVICE alone (Debian's config): the ZONE_DEVICE suite maps
    # DEVICE_PRIVATE memory, so it is not expected there.
    debian = sparc64 + "CONFIG_ZONE_DEVICE=y\n"
    assert "memmap_init_zone_device" not in kunit_runner.expected_suites(debian, every)
    # Without the memmap suite's option, none of its suites, whatever else.
    assert kunit_runner.expected_suites("CONFIG_ZONE_DEVICE=y\nCONFIG_64BIT=y\n", every) == []


def test_a_prefix_of_the_series_must_run_only_the_suites_it_defines(tmp_path):
    tests = tmp_path / "mm" / "mm_init_kunit.c"
    tests.parent.mkdir()
    tests.write_text('static struct kunit_suite a = {\n\t.name = "memmap_init",\n};\n'
                     'static struct kunit_suite b = {\n\t.name = "memmap_init_zone_device",\n};\n')
    defined = kunit_runner.defined_suites(tmp_path, ["mm/mm_init_kunit.c"])
    assert defined == {"memmap_init", "memmap_init_zone_device"}
    assert kunit_runner.expected_suites(ALL_SUITES, defined) == ["memmap_init",
                                                                 "memmap_init_zone_device"]


def test_kunit_py_reaches_qemu_with_tcg_only(tmp_path, monkeypatch):
    """kunit.py's `-accel kvm -accel hvf -accel tcg` reaches QEMU as TCG
    alone, every other argument as it was."""
    real = tmp_path / "bin" / "qemu-system-x86_64"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\necho \"$@\"\n")
    real.chmod(0o755)
    monkeypatch.setattr(kunit_runner, "TCG_ONLY", tmp_path / "tcg-only")
    env = kunit_runner.tcg_only_env("x86_64", {"PATH": str(real.parent)})
    assert env["PATH"].split(":")[0] == str(tmp_path / "tcg-only")
    out = subprocess.run(["qemu-system-x86_64", "-m", "1024", "-accel", "kvm", "-accel", "hvf",
                          "-accel", "tcg", "-serial", "stdio"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["-m", "1024", "-accel", "tcg", "-serial", "stdio"]


def test_kunit_py_gets_a_build_directory_whose_parent_exists(tmp_path, monkeypatch):
    from pathlib import Path
    """kunit.py makes its --build_dir with os.mkdir(): on a fresh checkout
    the lab's out directory must exist first."""
    import pytest
    from memlab import guest, kunit_runner, paths
    from memlab.runner import LabError
    monkeypatch.setattr(paths, "OUT", tmp_path / "fresh" / "out")
    monkeypatch.setattr(paths, "LOGS", tmp_path / "logs")
    monkeypatch.setattr(guest, "require_guest_tools", lambda: None)
    monkeypatch.setattr(kunit_runner, "series_kunitconfigs", lambda tree: ["mm"])
    # Whether this machine has QEMU yet is not what is tested here.
    monkeypatch.setattr(kunit_runner, "tcg_only_env", lambda arch, env: env)
    seen = []

    def kunit_py(cmd, log, phase, cwd, env, check):
        build_dir = Path(next(a for a in cmd if a.startswith("--build_dir=")).split("=", 1)[1])
        seen.append(build_dir.parent.is_dir())
        return 1
    monkeypatch.setattr(kunit_runner, "run_logged", kunit_py)
    with pytest.raises(LabError, match="wrote no results"):
        kunit_runner.run_kunit_tool("x86_64", tmp_path)
    assert seen == [True]
