"""The kernel selftests' outcomes as a guest reports them, and the
comparison of the base and patched kernels' runs."""
from memlab import console, selftests


def run(*lines: str, counted: int | None = None) -> console.Console:
    text = "\n".join(f"MEMLAB {line}" for line in lines)
    if counted is not None:
        text += f"\nMEMLAB selftests_mm_exit=1 selftests_mm_tests={counted}"
    return console.parse(text)


PASSING = ("selftest=mm:hugepage-mmap outcome=pass",
           "selftest=mm:gup_test_-u outcome=skip",
           "selftest=memory-hotplug:mem-on-off-test.sh outcome=pass")


def test_outcomes_keep_order_and_name_repeats_apart():
    con = run(*PASSING, "selftest=mm:hugepage-mmap outcome=fail")
    assert selftests.outcomes(con) == {
        "mm:hugepage-mmap": "pass", "mm:gup_test_-u": "skip",
        "memory-hotplug:mem-on-off-test.sh": "pass", "mm:hugepage-mmap#2": "fail"}


def test_a_complete_run_has_no_problem_even_with_a_failing_test():
    con = run(*PASSING[:2], "selftest=mm:cow outcome=fail", PASSING[2], counted=3)
    assert selftests.check_run(con) == []


def test_a_run_missing_tests_or_the_hotplug_suite_is_a_problem():
    assert selftests.check_run(run(*PASSING[:2], counted=5)) == [
        "run_vmtests.sh ran 5 tests, 2 reported",
        "the memory-hotplug selftest did not report"]
    assert selftests.check_run(run(PASSING[2], counted=0)) == ["run_vmtests.sh ran no test"]
    assert selftests.check_run(run("selftest=mm:cow outcome=crashed", PASSING[2],
                                   counted=1)) == ["selftest mm:cow: outcome 'crashed'"]


def test_compare_fails_regressions_and_shows_other_differences():
    base = {"mm:a": "pass", "mm:b": "skip", "mm:c": "fail", "mm:d": "pass"}
    assert selftests.compare(base, dict(base)) == ([], [])
    patched = {"mm:a": "fail", "mm:b": "skip", "mm:c": "pass", "mm:e": "pass"}
    assert selftests.compare(base, patched) == (
        ["mm:a: base pass, patched fail", "mm:d: base pass, patched not run"],
        ["mm:c: base fail, patched pass", "mm:e: base not run, patched pass"])
