"""Bench result parsing and tables, on captured real guest logs."""
from memlab import bench, console
from conftest import DATA


def scenario(name: str) -> bench.BenchScenario:
    return next(s for s in bench.scenarios(quick=True, pmem_gb=4) if s.name == name)


def test_rebind_samples_skip_the_first_bind():
    con = console.parse((DATA / "guest-fsdax-rebind.log").read_text())
    sc = scenario("fsdax-rebind")
    assert sc.samples(con) == [i.us for i in con.memmap_inits[1:]]
    assert len(sc.samples(con)) == 3
    assert sc.first_bind_us(con) == con.memmap_inits[0].us


def test_hugetlb_sample_is_the_allocation_time():
    con = console.parse("MEMLAB hugepages_requested=512 hugepages=512 hugetlb_alloc_ns=123456789\n")
    assert scenario("hugetlb-init-on-alloc").samples(con) == [123456.789]


def _result() -> dict:
    samples = {"fsdax-rebind": {"base": [100.0, 102.0, 98.0], "patched": [40.0, 41.0, 39.0]}}
    stats = bench.summarize(samples)["fsdax-rebind"]
    return {
        "mode": "icount", "date": "d", "host_cpu": "cpu",
        "kernels": {"base": "6.12.117", "patched": "6.12.117"},
        "scenarios": {"fsdax-rebind": {
            "metric": "memmap init per rebind",
            "stats": {v: vars(s) for v, s in stats.items()}}},
    }


def test_table_has_medians_ratio_and_the_emulated_label():
    table = bench.markdown(_result())
    assert "emulated" in table
    row = next(ln for ln in table.splitlines() if ln.startswith("| fsdax-rebind"))
    assert "| 100.0 | 40.0 | 0.400 | 98.0-102.0 | 39.0-41.0 | 3/3 |" in row
    assert "244.28 -> 96.79" in row          # the reference posting beside ours


def test_repeatability_compares_round_medians():
    rep = bench.repeatability({"s": {"base": [10.0, 10.0, 10.1, 10.1]}}, rounds=2)
    assert rep["s/base"].endswith("spread 1.00%")


def test_plots_are_written(tmp_path):
    import json
    import shutil
    import pytest
    from memlab import paths
    if not (paths.VENV / "bin" / "python3").exists():
        pytest.skip("no lab venv (memlab test creates it before pytest)")
    result = _result()
    result["scenarios"]["fsdax-rebind"]["samples"] = {
        "base": [100.0, 102.0, 98.0], "patched": [40.0, 41.0, 39.0]}
    src = tmp_path / "r.json"
    src.write_text(json.dumps(result))
    written = bench.write_plots(src, tmp_path)
    assert [p.name for p in written] == ["fsdax-rebind.png"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.rmtree(tmp_path)
