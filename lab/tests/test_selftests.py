"""The kernel selftests' outcomes as a guest reports them, and the
comparison of the base and patched kernels' runs."""
import json
import subprocess
from pathlib import Path

import pytest

from memlab import catalog, checks, console, paths, selftests
from memlab.runner import LabError


def run(*lines: str, counted: int | None = None, plan: int | None = None,
        notifier: str = "ran") -> console.Console:
    """A guest's report; run_vmtests.sh's plan line counts what it ran
    unless @plan says otherwise."""
    text = "\n".join(f"MEMLAB {line}" for line in lines)
    if counted is not None:
        text += (f"\nMEMLAB selftests_mm_exit=1 selftests_mm_tests={counted} "
                 f"selftests_mm_plan={counted if plan is None else plan} "
                 f"selftests_hotplug_notifier={notifier}")
    return console.parse(text)


PASSING = ("selftest=mm:hugepage-mmap outcome=pass runs=1",
           "selftest=mm:gup_test_-u outcome=skip runs=1",
           "selftest=memory-hotplug:mem-on-off-test.sh outcome=pass runs=1")


def test_outcomes_keep_order_and_name_repeats_apart():
    con = run(*PASSING, "selftest=mm:hugepage-mmap outcome=fail runs=3")
    assert selftests.outcomes(con) == {
        "mm:hugepage-mmap": "pass", "mm:gup_test_-u": "skip",
        "memory-hotplug:mem-on-off-test.sh": "pass", "mm:hugepage-mmap#2": "fail"}


def test_a_complete_run_has_no_problem_even_with_a_failing_test():
    con = run(*PASSING[:2], "selftest=mm:cow outcome=fail runs=3", PASSING[2],
              counted=3)
    assert selftests.check_run(con) == []


def test_a_run_missing_tests_or_the_hotplug_suite_is_a_problem():
    assert selftests.check_run(run(*PASSING[:2], counted=5)) == [
        "run_vmtests.sh ran 5 tests, 2 reported",
        "the memory-hotplug selftest did not report"]
    assert selftests.check_run(run(PASSING[2], counted=0)) == ["run_vmtests.sh ran no test"]
    assert selftests.check_run(run(*PASSING, counted=2, notifier="skipped")) == [
        "the memory-hotplug selftest skipped its memory notifier error half "
        "(memory-notifier-error-inject missing)"]
    assert selftests.check_run(run(*PASSING, counted=2, plan=5)) == [
        "run_vmtests.sh's plan line counts 5 tests, it ran 2: it did not run to its end"]
    assert selftests.check_run(run("selftest=mm:cow outcome=crashed runs=1", PASSING[2],
                                   counted=1)) == ["selftest mm:cow: outcome 'crashed'"]
    assert selftests.check_run(run("selftest=mm:cow outcome=pass", PASSING[2],
                                   counted=1)) == ["selftest mm:cow: runs None"]
    assert selftests.check_run(run("selftest=mm:cow outcome=pass runs=0", PASSING[2],
                                   counted=1)) == ["selftest mm:cow: runs '0'"]


def test_compare_fails_regressions_and_shows_other_differences():
    base = {"mm:a": "pass", "mm:b": "skip", "mm:c": "fail", "mm:d": "pass"}
    assert selftests.compare(base, dict(base)) == ([], [])
    patched = {"mm:a": "fail", "mm:b": "skip", "mm:c": "pass", "mm:e": "pass"}
    assert selftests.compare(base, patched) == (
        ["mm:a: base pass, patched fail", "mm:d: base pass, patched not run"],
        ["mm:c: base fail, patched pass", "mm:e: base not run, patched pass"])


def test_a_test_passing_on_a_later_run_is_no_regression_but_is_shown_and_recorded(
        monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    base = run(*PASSING, counted=2)
    patched = run("selftest=mm:hugepage-mmap outcome=pass runs=2", *PASSING[1:], counted=2)
    assert selftests.run_again(base) == {}
    assert selftests.run_again(patched) == {"mm:hugepage-mmap": 2}
    assert checks.compare_selftests("debian", base, patched) == []
    assert ("selftests that failed on patched and were run again: "
            "mm:hugepage-mmap ended pass on run 2") in capsys.readouterr().out
    recorded = json.loads((tmp_path / "selftests" / "debian.json").read_text())
    assert recorded["tests"][0] == {"test": "mm:hugepage-mmap", "base": "pass",
                                    "patched": "pass", "patched_runs": 2}
    broken = run("selftest=mm:hugepage-mmap outcome=fail runs=3", *PASSING[1:], counted=2)
    assert checks.compare_selftests("debian", base, broken) == [
        "mm:hugepage-mmap: base pass, patched fail"]


# run_vmtests.sh's output as the guest keeps it: each test's title, its
# output (prefixed, and here mimicking the lines the guest reads), its TAP
# line. uffd-unit-tests is the one the guest knows to be flaky.
VMTESTS_OUTPUT = """\
# -----------------------
# running ./uffd-unit-tests
# -----------------------
# running abort_hooks()...
# ok 1 uffd-unit-tests
not ok 1 uffd-unit-tests # exit=1
# running ./cow
not ok 2 cow # exit=1
ok 3 sudo -u nobody ./on-fault-limit # SKIP
ok 4 mkdirty
# [SKIP] ./khugepaged all:file
# ------------------------------
"""

# A run_vmtests.sh that takes `-t userfaultfd` or `-t thp` and says how the
# flaky test ended on this run, as the file "rerun-N" of its directory
# tells (its last line by default), after reading what it can of its input.
RERUN_SCRIPT = """\
case "$1 $2" in "-t userfaultfd" | "-t thp") ;; *) exit 2 ;; esac
cat >/dev/null
n=$(($(cat runs 2>/dev/null || echo 1) + 1)); echo $n > runs
cat rerun-$n 2>/dev/null || tail -n 1 rerun-*
"""


def report_tap(tests: Path, reruns: list[str],
               output: str = VMTESTS_OUTPUT) -> subprocess.CompletedProcess[str]:
    """The guest's report of @output, its reruns ending as the TAP lines
    @reruns say."""
    (tests / "run_vmtests.sh").write_text(RERUN_SCRIPT)
    for n, line in enumerate(reruns, start=2):
        (tests / f"rerun-{n}").write_text(f"# uffd output\n{line}\n")
    (tests / "out").write_text(output)
    script = (f". {paths.SCENARIOS / 'lib.sh'}; . {paths.SCENARIOS / 'kselftest-report.sh'}; "
              f"report_tap mm {tests} {tests / 'out'}")
    return subprocess.run(["sh", "-euc", script], capture_output=True, text=True, check=False)


OTHERS = [{"selftest": "mm:cow", "outcome": "fail", "runs": "1"},
          {"selftest": "mm:sudo_-u_nobody_./on-fault-limit", "outcome": "skip", "runs": "1"},
          {"selftest": "mm:mkdirty", "outcome": "pass", "runs": "1"},
          {"selftest": "mm:khugepaged_all:file", "outcome": "skip", "runs": "1"}]


def test_a_flaky_test_reruns_its_category_until_it_passes_and_no_other_test_reruns(tmp_path):
    out = report_tap(tmp_path, ["not ok 1 uffd-unit-tests # exit=1", "ok 1 uffd-unit-tests"])
    assert out.returncode == 0, out.stderr
    assert console.parse(out.stdout).results == [
        {"selftest": "mm:uffd-unit-tests", "outcome": "pass", "runs": "3"}, *OTHERS]
    assert "uffd-unit-tests failed; run 3 of 3: run_vmtests.sh -t userfaultfd" in out.stderr
    assert "cow failed" not in out.stderr


def test_a_flaky_test_whose_name_has_spaces_reruns_its_category(tmp_path):
    out = report_tap(tmp_path, ["ok 1 khugepaged\nok 2 khugepaged -s 2"],
                     "ok 1 khugepaged\nnot ok 2 khugepaged -s 2 # exit=1\n")
    assert out.returncode == 0, out.stderr
    assert console.parse(out.stdout).results == [
        {"selftest": "mm:khugepaged", "outcome": "pass", "runs": "1"},
        {"selftest": "mm:khugepaged_-s_2", "outcome": "pass", "runs": "2"}]
    assert "khugepaged -s 2 failed; run 2 of 3: run_vmtests.sh -t thp" in out.stderr


@pytest.mark.parametrize("skipping_run", [2, 3])
def test_a_flaky_test_that_never_passes_again_fails_even_when_a_rerun_skips(
        tmp_path, skipping_run):
    reruns = ["not ok 1 uffd-unit-tests # exit=1"] * 2
    reruns[skipping_run - 2] = "ok 1 uffd-unit-tests # SKIP"
    out = report_tap(tmp_path, reruns)
    assert out.returncode == 0, out.stderr
    assert console.parse(out.stdout).results == [
        {"selftest": "mm:uffd-unit-tests", "outcome": "fail", "runs": "3"}, *OTHERS]


def test_hmm_tests_link_the_helpers_the_selftests_makefile_names(tmp_path):
    (tmp_path / "Makefile").write_text("TEST_GEN_FILES += hmm-tests\n"
                                       "$(TEST_GEN_PROGS): vm_util.c thp_settings.c\n"
                                       "$(TEST_GEN_FILES): vm_util.c hugepage_settings.c\n")
    assert selftests.helper_sources(tmp_path) == [tmp_path / "vm_util.c",
                                                  tmp_path / "hugepage_settings.c"]
    (tmp_path / "Makefile").write_text("$(TEST_GEN_FILES): vm_util.c \\\n\tthp_settings.c\n")
    assert selftests.helper_sources(tmp_path) == [tmp_path / "vm_util.c",
                                                  tmp_path / "thp_settings.c"]
    (tmp_path / "Makefile").write_text("$(TEST_GEN_FILES): $(HELPERS)\n")
    with pytest.raises(LabError, match="name a variable"):
        selftests.helper_sources(tmp_path)
    (tmp_path / "Makefile").write_text("TEST_GEN_FILES += hmm-tests\n")
    assert selftests.helper_sources(tmp_path) == []
    with pytest.raises(LabError, match="Makefile"):
        selftests.helper_sources(tmp_path / "missing")
