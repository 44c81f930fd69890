"""The summary arithmetic of `memlab test` and the guest verdicts."""
import json

import pytest

from memlab import catalog, checks, console, guest, scenario, testcmd
from conftest import DATA


def test_pytest_closing_line():
    assert testcmd.parse_pytest_counts("...\n12 passed in 0.06s\n") == (12, 0)
    assert testcmd.parse_pytest_counts("x\n1 failed, 11 passed, 2 errors in 1s\n") == (11, 3)
    assert testcmd.parse_pytest_counts("") == (0, 0)


def _result(log: str, rc: int) -> guest.GuestResult:
    text = (DATA / log).read_text(errors="replace")
    return guest.GuestResult(guest.GuestSpec(), rc, DATA / log, console.parse(text), "tcg", 1.0)


def test_expected_warn_passes_the_runner_self_test():
    sc = catalog.get("runner-catches-warn")
    res = _result("guest-provoke-warn.log", 0)
    assert not res.ok
    assert sc.verdict(res) == []


def test_runner_self_test_fails_when_no_warn_was_seen():
    sc = catalog.get("runner-catches-warn")
    assert sc.verdict(_result("guest-hello.log", 0))


def test_guest_script_failure_fails_the_scenario():
    sc = catalog.get("fsdax-dev")
    problems = sc.verdict(_result("guest-fsdax-rebind.log", 1))
    assert "guest script exited 1" in problems


@pytest.mark.parametrize("name, log", [
    ("fsdax-fs-dev", "guest-fsdax-fs.log"),
    ("hmm-tests", "guest-hmm-tests.log"),
    ("rebind-stress", "guest-rebind-stress.log"),
])
def test_a_good_run_passes_its_checks(name, log):
    assert catalog.get(name).verdict(_result(log, 0)) == []


@pytest.mark.parametrize("name, log, rc, report, problem", [
    # Order-0 template with refcount 0: direct I/O from a DAX mapping WARNs
    # in try_grab_folio() and the script stops.
    ("fsdax-fs-dev", "guest-fsdax-fs-refcount0.log", 1, ("WARNING", "try_grab_folio"),
     "pages pinned per round [], expected at least 8192 in each of 3 rounds"),
    # Order-0 template without pgmap: zone_device_page_init() dereferences it.
    ("hmm-tests", "guest-hmm-tests-pgmap-null.log", 255, ("BUG", "NULL pointer"),
     "hmm-tests printed no totals"),
    # Compound heads with refcount 0: the first 2M cycle's GUP WARNs.
    ("rebind-stress", "guest-rebind-stress-head-refcount0.log", 1,
     ("WARNING", "try_grab_folio"), "expected 10 cycles, saw 3"),
])
def test_a_broken_template_fails_the_scenario(name, log, rc, report, problem):
    problems = catalog.get(name).verdict(_result(log, rc))
    kind, text = report
    assert any(p.startswith(kind) and text in p for p in problems)
    assert problem in problems


def test_dax_fs_check_wants_every_round_used():
    sc = catalog.get("fsdax-fs-dev")
    con = _result("guest-fsdax-fs.log", 0).console
    con.results = [r for r in con.results if r.get("files_used") != "2"]
    problems = " | ".join(sc.problems(con))
    assert "rounds of file use: expected ['0', '1', '2']" in problems


def test_devdax_check_wants_the_fork_check():
    sc = catalog.get("devdax-2m")
    assert "the devdax mapping was not checked across fork" in \
        sc.verdict(_result("guest-devdax-rebind.log", 0))
    assert sc.verdict(_result("guest-devdax-fork.log", 0)) == []


def test_base_kernel_runs_only_the_scenarios_meant_for_it():
    names = [sc.name for sc in testcmd.base_scenarios("lab")]
    assert names == ["fsdax-fs-dev", "fsdax-fs-mem", "kmem-memmap-on-memory", "hmm-tests",
                     "hugetlb-1g"]
    names = [sc.name for sc in testcmd.base_scenarios("debian")]
    assert names == ["fsdax-fs-dev", "fsdax-fs-mem", "kmem-memmap-on-memory", "hugetlb-1g",
                     "virtio-mem", "mm-selftests"]
    assert testcmd.base_scenarios("vm") == []


def test_the_selftests_step_fails_on_a_test_that_ends_otherwise_on_patched(
        monkeypatch, tmp_path):
    """run_guest() weighs the two kernels' selftests together: alike, one
    more check passes; a test passing on base only fails the step, named."""
    from memlab import guest, hostinfo, paths
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    monkeypatch.setattr(testcmd.accel, "default_accel", lambda image: "tcg")
    sc = catalog.get("mm-selftests")
    monkeypatch.setattr(testcmd, "SCENARIOS", {sc.name: sc})
    logs = {"base": "MEMLAB selftest=mm:cow outcome=pass runs=1\n",
            "patched": "MEMLAB selftest=mm:cow outcome=fail runs=1\n"}

    def boot(spec, failure_expected=False):
        text = logs[spec.variant] + ("MEMLAB selftest=memory-hotplug:mem-on-off-test.sh "
                                     "outcome=pass runs=1\n"
                                     "MEMLAB selftests_mm_tests=1 selftests_mm_plan=1 "
                                     "selftests_hotplug_notifier=ran done=1\n")
        return guest.GuestResult(spec, 0, tmp_path / "log", console.parse(text), "tcg", 1.0)
    monkeypatch.setattr(guest, "boot_and_run", boot)
    step = testcmd.run_guest("debian", full=True)
    assert (step.passed, step.failed) == (2, 1)
    assert ("mm-selftests, base against patched: FAILED: mm:cow: base pass, patched fail"
            in step.notes)
    recorded = json.loads((tmp_path / "selftests" / "debian.json").read_text())
    assert recorded["tests"][0] == {"test": "mm:cow", "base": "pass", "patched": "fail"}
    logs["patched"] = logs["base"]
    step = testcmd.run_guest("debian", full=True)
    assert (step.passed, step.failed) == (3, 0)


def test_hmm_tests_check_counts_every_case():
    sc = catalog.get("hmm-tests")
    con = _result("guest-hmm-tests.log", 0).console
    for r in con.results:
        if "hmm_skip" in r:
            r["hmm_pass"], r["hmm_skip"] = "57", "1"
    assert "hmm-tests: pass 57, fail 0, xfail 0, xpass 0, skip 1, error 0" in sc.problems(con)


def test_hmm_tests_may_leave_out_only_the_coherent_device_thp_cases():
    sc = catalog.get("hmm-tests")
    con = _result("guest-hmm-tests.log", 0).console
    assert sc.problems(con) == []
    con.results.append({"hmm_left_out": "hmm.hmm_device_coherent.migrate_anon_huge_err"})
    assert sc.problems(con) == []
    con.results.append({"hmm_left_out": "hmm.hmm_device_private.migrate_anon_huge_err"})
    assert sc.problems(con) == ["hmm-tests left out cases it may not: "
                                "hmm.hmm_device_private.migrate_anon_huge_err"]


def test_hmm_tests_leave_out_the_slow_cases_on_kasan_kernels_only():
    """debug (KASAN) leaves the THP migration benchmark out on every device
    and boots with allocation profiling off; lab keeps both."""
    sc = catalog.get("hmm-tests")
    assert sc.spec("patched", "debug").env["SLOW_LEFT_OUT"] == "benchmark_thp_migration"
    assert "SLOW_LEFT_OUT" not in sc.spec("patched", "lab").env
    assert scenario.PROFILING_OFF in sc.spec("base", "debug").append
    assert scenario.PROFILING_OFF not in sc.spec("base", "lab").append
    con = _result("guest-hmm-tests.log", 0).console
    con.results.append({"hmm_slow_left_out": "benchmark_thp_migration"})
    assert sc.problems(con, "debug") == []
    assert sc.problems(con, "lab") == ["hmm-tests left out cases it may not: "
                                       "benchmark_thp_migration"]


def test_rebind_stress_check_compares_each_cycles_data():
    sc = catalog.get("rebind-stress")
    con = _result("guest-rebind-stress.log", 0).console
    cycle = next(r for r in con.results if r.get("cycle") == "4")
    cycle["checksum_rebound"] = "0" * 64
    problems = " | ".join(sc.problems(con))
    assert "cycle 4 (devdax:1G): data written" in problems


def test_the_test_plan_comes_from_the_architecture_table():
    plan = [(config, a.name, a.bootable) for config, a in testcmd.kernels()]
    assert plan == [("lab", "x86_64", True), ("defer", "x86_64", True), ("vm", "x86_64", True),
                    ("debug", "x86_64", True), ("debian", "x86_64", True),
                    ("kunit", "arm64", True), ("kunit", "sparc64", True),
                    ("highmem", "i386", False)]
    assert [testcmd.kernel_skip_name(c, a) for c, a, _ in plan] == \
        ["lab", "defer", "vm", "debug", "debian", "arm64", "sparc64", "i386"]
    assert {"vm", "debug", "debian"} <= testcmd.FULL_ONLY


def test_every_scenario_reports_done_or_fails():
    # done=1 is judged once, for every scenario, before its own checks.
    sc = catalog.get("boot-memmap")
    con = console.parse("MEMLAB mem_total_kb=100\n")
    assert "scenario did not report done=1" in sc.problems(con)


def test_the_scenario_table_is_whole():
    from memlab import paths
    for sc in catalog.SCENARIOS.values():
        assert (paths.SCENARIOS / f"{sc.script}.sh").exists(), sc.name
        assert set(sc.runs_on()) <= set(catalog.ALL_CONFIGS), sc.name
    names = [row.name for sc in catalog.SCENARIOS.values() for row in sc.bench]
    assert len(names) == len(set(names)) == len(catalog.bench_rows())


def test_the_default_plan_runs_each_scenario_once_and_full_all_of_them():
    from memlab import arches, catalog
    default = {c: {sc.name for sc in testcmd.patched_scenarios(c, False)}
               for c in testcmd.default_configs()}
    assert testcmd.default_configs() == ("defer",)
    assert {"boot-deferred", "fast-paths", "runner-catches-warn"} <= default["defer"]
    for sc in catalog.SCENARIOS.values():
        first = next((c for c in sc.runs_on() if c in default), None)
        assert first is None or sc.name in default[first], sc.name
    for config in arches.guest().test_configs:
        assert {sc.name for sc in testcmd.patched_scenarios(config, True)} == \
            {sc.name for sc in catalog.SCENARIOS.values() if config in sc.runs_on()}


def test_full_runs_every_step_of_the_default_plan_and_more():
    default = [t.name for t in testcmd.plan()]
    full = [t.name for t in testcmd.plan(full=True)]
    assert set(default) <= set(full)
    # The native check compiles against a kernel the default plan builds.
    assert "native" in default and "build lab" not in default
    # The series' .kunitconfig, run by kunit.py as its commit message says.
    assert {"kunit.py x86_64", "kunit.py parts"} <= set(full) - set(default)
    assert {"build lab", "build lab base", "guest lab", "build highmem i386", "prefixes",
            "bench --quick", "matrix", "package", "image", "build debian base",
            "guest debian"} <= set(full) - set(default)
    # What a step needs runs before it.
    for plan in (testcmd.plan(), testcmd.plan(full=True)):
        seen: set[str] = set()
        for t in plan:
            assert set(t.needs) <= seen, t.name
            seen.add(t.name)


def test_skipping_a_kind_leaves_out_its_steps_and_those_that_need_them():
    names = [t.name for t in testcmd.plan(skip={"build"})]
    assert not any(n.startswith(("build", "kunit", "guest")) for n in names)
    assert [t.name for t in testcmd.plan(quick=True, skip={"pytest", "uploads", "7.2"})] == [
        "mypy", "source", "apply", "work tree", "checkpatch"]
    assert [t.name for t in testcmd.plan(quick=True)] == [
        "pytest", "mypy", "uploads", "source", "apply", "work tree", "checkpatch", "7.2"]


def test_another_base_is_tested_by_its_own_run_with_a_small_default_plan(monkeypatch):
    from memlab import paths
    assert testcmd.other_bases() == ["7.2"]
    assert [t.name for t in testcmd.plan()][-1] == "7.2"
    monkeypatch.setattr(paths, "BASE", "7.2")
    assert [t.name for t in testcmd.plan()] == [
        "source", "apply", "work tree", "checkpatch", "kunit.py x86_64"]
    assert [t.name for t in testcmd.plan(quick=True)] == [
        "source", "apply", "work tree", "checkpatch"]
    full = [t.name for t in testcmd.plan(full=True)]
    assert {"build lab", "guest defer", "kunit.py parts", "prefixes", "matrix"} <= set(full)
    # What the default base's run covers for all, or only it has.
    assert not {"pytest", "mypy", "uploads", "native", "package", "image", "7.2"} & set(full)


def test_another_bases_run_is_one_step_with_its_checks(monkeypatch, tmp_path):
    import os
    from memlab import paths, runrecord
    monkeypatch.setattr(paths, "REPO", tmp_path)
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    record = tmp_path / "results" / "7.2" / "test" / "default.json"
    ran: list[list[str]] = []

    def child(writes):
        def run(cmd, log, phase, env, check):
            ran.append(cmd)
            assert env["MEMLAB_BASE"] == "7.2" and "MEMLAB_SOURCE_VERSION" not in env
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text("==== memlab test summary ====\napply  1 passed\n")
            if writes:
                steps = [runrecord.StepRecord("apply", 1, 0, 1.0),
                         runrecord.StepRecord("kunit.py x86_64", 128, 0, 60.0)]
                runrecord.RunRecord("d", "cpu", "c", 0, 61.0, steps).write(record)
            return 0
        return run
    monkeypatch.setenv("MEMLAB_SOURCE_VERSION", "6.12.999-1")
    # The step the default plan makes: the user's options only, none of
    # what the default plan leaves to --full.
    monkeypatch.setattr(testcmd, "run_logged", child(True))
    step = next(t for t in testcmd.plan() if t.name == "7.2").work()
    assert ran == [[str(tmp_path / "memlab"), "test"]]
    assert (step.passed, step.failed) == (129, 0)
    # A record an earlier run left is not this run's.
    os.utime(record, ns=(0, 0))
    monkeypatch.setattr(testcmd, "run_logged", child(False))
    step = next(t for t in testcmd.plan(skip={"guest"}) if t.name == "7.2").work()
    assert ran[-1] == [str(tmp_path / "memlab"), "test", "--skip=guest"]
    assert (step.passed, step.failed) == (1, 0)

    def failing(cmd, log, phase, env, check):
        ran.append(cmd)
        log.write_text("==== memlab test summary ====\nkunit.py x86_64  0 passed, 1 failed\n")
        return 1
    monkeypatch.setattr(testcmd, "run_logged", failing)
    step = testcmd.run_base("7.2", False, True, {"guest", "7.2"})
    assert ran[-1] == [str(tmp_path / "memlab"), "test", "--full", "--skip=guest"]
    assert step.failed == 1 and "kunit.py x86_64  0 passed, 1 failed" in step.notes

    # A part of --full: its own steps, not those earlier parts added.
    full = record.with_name("full.json")
    earlier = runrecord.RunRecord("2026-12-01 10:00:00 UTC", "cpu", "c", 0, 9.0,
                                  [runrecord.StepRecord("kunit lab", 177, 0, 3.0)])
    runrecord.RunRecord.from_part(earlier).write(full)
    os.utime(full, ns=(0, 0))

    def part(cmd, log, phase, env, check):
        ran.append(cmd)
        log.write_text("==== memlab test summary ====\nkunit debug  183 passed\n")
        now = runrecord.RunRecord("2026-12-02 10:00:00 UTC", "cpu", "c", 0, 9.0,
                                  [runrecord.StepRecord("kunit debug", 183, 0, 40.0)])
        runrecord.RunRecord.load(full).with_steps_of(now).write(full)
        return 0
    monkeypatch.setattr(testcmd, "run_logged", part)
    step = testcmd.run_base("7.2", False, True, {"lab", "7.2"})
    assert (step.passed, step.failed) == (183, 0)
    assert "kunit debug: 183 passed, 0 failed" in step.notes


def test_a_partial_full_run_adds_its_steps_to_the_whole_runs_record(monkeypatch, tmp_path):
    from memlab import paths, runrecord, tables
    monkeypatch.setattr(paths, "REPO", tmp_path)
    monkeypatch.setattr(runrecord, "TEST_RESULTS", tmp_path)
    new = {"commit": "new", "series": {}, "base": "", "host_cpu": "cpu"}
    monkeypatch.setattr(testcmd, "provenance_of_plan", lambda: new)
    monkeypatch.setattr(testcmd, "say", lambda text: None)
    ran = testcmd.TestRun([testcmd.Step("kunit debug", passed=182),
                           testcmd.Step("kunit.py x86_64", passed=9)], 60.0)
    monkeypatch.setattr(testcmd, "execute", lambda quick, full, skip: ran)
    record = tmp_path / "full.json"
    # No whole run to add to: the part starts the record, and says so.
    assert testcmd.run(full=True, skip={"lab"}) == 0
    started = runrecord.RunRecord.load(record)
    assert not started.whole and [s.name for s in started.steps] == ["kunit debug", "kunit.py x86_64"]
    assert all(s.provenance == new and s.date == started.date for s in started.steps)
    source = tables._run_source(record, started, "`memlab test --full`")
    assert source.startswith("full.json: no whole run, only parts (`memlab test --full`); run ")
    assert tables._steps_cell(started, "kunit", tables._kunit_result, "") == "debug: 182 pass, 0 fail"
    assert tables._steps_cell(started, "guest", tables._guest_result, "") == "not run"
    whole = [runrecord.StepRecord("kunit lab", 149, 0, 3.0),
             runrecord.StepRecord("kunit debug", 127, 0, 30.0, skipped=23)]
    runrecord.RunRecord("then", "cpu", "old", 0, 99.0, whole, provenance={"commit": "old"}
                        ).write(record)
    assert testcmd.run(full=True, skip={"lab"}) == 0
    rec = runrecord.RunRecord.load(record)
    assert rec.whole and (rec.date, rec.commit, rec.seconds) == ("then", "old", 99.0)
    assert [(s.name, s.passed, s.skipped) for s in rec.steps] == [
        ("kunit lab", 149, 0), ("kunit debug", 182, 0), ("kunit.py x86_64", 9, 0)]
    lab, debug, kunit_py = rec.steps
    assert lab.date is None and debug.date == kunit_py.date != "then"
    assert debug.provenance == new
    assert list(rec.rerun_steps().values()) == [[debug, kunit_py]]
    assert tables._rerun_text(rec).startswith(f"; re-run {debug.date}, commit new, STALE")
    assert tables._rerun_text(rec).endswith(": kunit debug, kunit.py x86_64")
    # A failed partial run leaves the record as it was.
    ran.steps.append(testcmd.Step("guest debug", failed=1))
    assert testcmd.run(full=True, skip={"lab"}) == 1
    assert runrecord.RunRecord.load(record) == rec
    # A run of the default plan with steps left out records nothing.
    ran.steps.pop()
    record.unlink()
    assert testcmd.run(skip={"lab"}) == 0 and not list(tmp_path.iterdir())
