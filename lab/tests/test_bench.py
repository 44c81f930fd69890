"""Bench samples, results and tables, on captured real guest logs."""
import pytest

from memlab import bench, console, report, results
from conftest import DATA


def scenario(name: str) -> bench.BenchScenario:
    return next(s for s in bench.scenarios(quick=True, pmem_gb=4) if s.name == name)


def test_rebind_samples_skip_the_first_bind():
    con = console.parse((DATA / "guest-fsdax-rebind.log").read_text())
    sc = scenario("fsdax-rebind")
    assert sc.samples(con) == [i.us for i in con.memmap_inits[1:]]
    assert len(sc.samples(con)) == 3
    assert sc.first_bind_us(con) == con.memmap_inits[0].us


def test_hugetlb_samples_are_every_allocation_time():
    con = console.parse("MEMLAB hugepages_requested=512 hugetlb_alloc_ns=123456789\n"
                        "MEMLAB hugepages=512 alloc=1\n"
                        "MEMLAB hugepages_requested=512 hugetlb_alloc_ns=123000000\n"
                        "MEMLAB hugepages=512 alloc=2\n")
    assert scenario("hugetlb-init-on-alloc").samples(con) == [123456.789, 123000.0]


def _result(samples=None, mode="icount", vcpus=1) -> results.Result:
    row = results.Row(
        metric="memmap init per rebind", memory_gb=4, pmem_gb=4, env={}, append=[],
        samples=samples or {"base": [100.0, 102.0, 98.0], "patched": [40.0, 41.0, 39.0]},
        first_bind_us={})
    return results.Result(
        mode=mode, label="emulated: test", quick=True, rounds=1, guest_vcpus=vcpus,
        date="d", host_cpu="cpu", host="h",
        kernels={"base": "6.12.117", "patched": "6.12.117"}, timing="t",
        rows={"fsdax-rebind": row})


def test_table_has_medians_ratio_and_the_emulated_label():
    table = report.markdown(_result())
    assert "emulated" in table
    row = next(ln for ln in table.splitlines() if ln.startswith("| fsdax-rebind"))
    assert "| 100.0 | 40.0 | 0.400 | 98.0-102.0 | 39.0-41.0 | 3/3 |" in row
    assert "244.28 -> 96.79" in row          # the reference posting beside ours


def test_repeatability_compares_round_medians():
    rep = results.repeatability({"s": {"base": [10.0, 10.0, 10.1, 10.1]}}, rounds=2)
    assert rep["s/base"].round_medians == [10.0, 10.1]
    assert abs(rep["s/base"].spread - 0.01) < 1e-9


def test_unrepeatable_rounds_are_named():
    rep = results.repeatability({"s": {"base": [10.0, 10.0, 10.2, 10.2],
                                       "patched": [5.0, 5.0, 5.0, 5.0]}}, rounds=2)
    assert results.unrepeatable_rows(rep) == ["s/base spread 2.00%"]


def test_first_bind_gets_its_own_row():
    result = _result()
    row = result.rows["fsdax-rebind"]
    row.first_bind_us, row.first_bind_apart = {"base": [120.0, 120.0], "patched": [50.0, 50.0]}, True
    table = report.markdown(result)
    row = next(ln for ln in table.splitlines() if "(first bind)" in ln)
    assert "| 120.0 | 50.0 | 0.417 |" in row


def test_bench_scenarios_are_the_test_scenarios_resized():
    from memlab.catalog import SCENARIOS
    full = {s.name: s for s in bench.scenarios(quick=False, pmem_gb=16)}
    fsdax = full["fsdax-rebind"].scenario
    assert fsdax.script == SCENARIOS["fsdax-dev"].script
    assert fsdax.check is SCENARIOS["fsdax-dev"].check
    assert fsdax.pmem_gb == 16 and fsdax.env["REBINDS"] == "30"
    assert SCENARIOS["fsdax-dev"].env["REBINDS"] == "3"      # not modified
    assert "init_on_alloc=1" in full["hugetlb-init-on-alloc"].scenario.append


def test_hugetlb_log_from_the_python_timer_is_checked():
    con = console.parse((DATA / "guest-hugetlb-zero.log").read_text())
    sc = scenario("hugetlb-init-on-alloc")
    assert sc.scenario.check(con, {**sc.scenario.env, "ALLOCS": "5"}) == []
    assert sc.samples(con) == [int(ns) / 1000.0 for ns in con.result_values("hugetlb_alloc_ns")]
    assert len(sc.samples(con)) == 5


def test_plots_are_written(tmp_path):
    import shutil
    import pytest
    from memlab import native as native_bench, paths
    if not (paths.VENV / "bin" / "python3").exists():
        pytest.skip("no lab venv (memlab test creates it before pytest)")
    src = tmp_path / "r.json"
    _result(mode="wall").write(src)
    written = report.write_plots(src, tmp_path)
    assert [p.name for p in written] == ["summary.png", "fsdax-rebind.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)
    # icount samples are near-constant: the summary alone.
    _result(mode="icount").write(src)
    assert [p.name for p in report.write_plots(src, tmp_path)] == ["summary.png"]
    # A native result: its loops and clearing rows.
    native = report.write_plots(native_bench.DOCUMENTED, tmp_path)
    assert [p.name for p in native] == ["native.png"]
    assert native[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.rmtree(tmp_path)


def test_device_private_log_checks_the_chunk_size_asked_for():
    from memlab.checks import check_device_private
    con = console.parse((DATA / "guest-device-private.log").read_text())
    assert check_device_private(con, {"LOADS": "2", "CHUNK_MB": "65536"}) == []
    assert [i.pages for i in con.memmap_inits] == [16777216] * 4
    problems = check_device_private(con, {"LOADS": "2", "CHUNK_MB": "256"})
    assert any("asked for 256 MB" in p for p in problems)


def test_devdax_log_with_udev_quiesced_repeats_within_the_limit():
    # A real -icount boot: with udevd stopped, the rebinds agree to 0.01%.
    con = console.parse((DATA / "guest-devdax-rebind.log").read_text())
    assert con.result("quiesced") == "udev"
    xs = scenario("devdax-rebind").samples(con)
    assert len(xs) == 3
    assert (max(xs) - min(xs)) / min(xs) < results.REPEATABLE


def test_each_mode_boots_its_guests_with_the_accelerator_its_label_names(monkeypatch):
    # wall must not become KVM where a probe succeeds: the table says TCG.
    seen = []

    def fake_boot(spec, failure_expected=False):
        seen.append((spec.accel, spec.variant, spec.append[-1:]))
        raise bench.LabError("stop here")
    monkeypatch.setattr(bench.guest, "boot_and_run", fake_boot)
    sc = bench.scenarios(quick=True, pmem_gb=4)[0]
    for mode in ("icount", "wall", "kvm"):
        with pytest.raises(bench.LabError):
            bench.measure(sc, bench.PATCHED, mode)
    assert [accel for accel, _, _ in seen] == ["tcg-icount", "tcg", "kvm"]
    # The one-thread variant: the patched kernel, told so on its command line.
    with pytest.raises(bench.LabError):
        bench.measure(sc, bench.ONE_THREAD, "wall")
    assert seen[-1] == ("tcg", "patched", ["mm_init.zone_device_init_threads=1"])


def test_one_thread_variant_only_with_vcpus_to_share():
    fsdax, hugetlb = scenario("fsdax-rebind"), scenario("hugetlb-init-on-alloc")
    assert [v.name for v in fsdax.variants(2)] == ["base", "patched", "patched-1thread"]
    assert [v.name for v in fsdax.variants(1)] == ["base", "patched"]
    assert [v.name for v in hugetlb.variants(2)] == ["base", "patched"]
    assert bench.ONE_THREAD.kernel == "patched"
    assert bench.ONE_THREAD.append == ("mm_init.zone_device_init_threads=1",)


def test_parallel_table_compares_all_vcpus_with_one_thread():
    result = _result({"base": [100.0], "patched": [30.0, 32.0],
                      "patched-1thread": [50.0, 52.0]}, mode="wall", vcpus=2)
    table = report.markdown(result)
    assert "2 vCPUs" in table
    row = [ln for ln in table.splitlines() if ln.startswith("| fsdax-rebind")][-1]
    assert row == "| fsdax-rebind | 51.0 | 31.0 | 0.608 | 100.0 | 50.0-52.0 | 30.0-32.0 | 2/2 |"


def test_icount_table_says_why_there_is_no_parallel_row():
    assert "under -icount all vCPUs share one instruction clock" in report.markdown(_result())


def test_kernels_must_time_the_same_page_counts():
    same = {"kmem-online": {"base": {32768}, "patched": {32768}},
            "hugetlb-init-on-alloc": {"base": set(), "patched": set()}}
    assert results.unequal_page_counts(same) == []
    differ = {"boot-memmap": {"base": {786301}, "patched": {786300}}}
    assert results.unequal_page_counts(differ) == [
        "boot-memmap: base [786301], patched [786300]"]


def test_results_survive_their_json():
    # What report.py reads back is what the bench wrote.
    result = _result()
    result.repeatability = results.repeatability({"fsdax-rebind": result.rows["fsdax-rebind"].samples}, 1)
    again = results.Result.from_json(result.to_json())
    assert again == result
    assert again.to_json()["scenarios"]["fsdax-rebind"]["stats"]["base"]["median"] == 100.0


def test_every_stored_result_loads():
    from memlab import paths
    for path in sorted(paths.RESULTS.glob("*/bench.json")):
        r = results.Result.load(path)
        assert r.rows and all(row.samples for row in r.rows.values()), path


def test_a_row_boots_and_builds_the_kernels_of_its_config(monkeypatch):
    # boot-deferred measures the deferring kernels; the others the lab's.
    full = {s.name: s for s in bench.scenarios(quick=False, pmem_gb=4)}
    deferred, boot = full["boot-deferred"], full["boot-memmap"]
    assert (deferred.row.config, boot.row.config) == ("defer", "lab")
    assert deferred.scenario.env["FILL_PCT"] == "0" == boot.scenario.env["FILL_PCT"]
    seen = []

    def fake_boot(spec, failure_expected=False):
        seen.append(spec.config)
        raise bench.LabError("stop here")
    monkeypatch.setattr(bench.guest, "boot_and_run", fake_boot)
    with pytest.raises(bench.LabError):
        bench.measure(deferred, bench.BASE, "icount")
    assert seen == ["defer"]
    built = []
    monkeypatch.setattr(bench.kernel_tree, "has_tree", lambda: True)
    monkeypatch.setattr(bench.guest, "build_kernel", lambda kernel, config: built.append((kernel, config)))
    monkeypatch.setattr(bench.accel, "kvm_usable", lambda image: False)
    with pytest.raises(bench.LabError):
        bench.run(only=["boot-deferred", "boot-memmap"])
    assert built == [("base", "defer"), ("patched", "defer"), ("base", "lab"), ("patched", "lab")]
