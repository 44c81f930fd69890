"""The summary arithmetic of `memlab test` and the guest verdicts."""
from memlab import console, guest, scenarios, testcmd
from conftest import DATA


def test_pytest_closing_line():
    assert testcmd.parse_pytest_counts("...\n12 passed in 0.06s\n") == (12, 0)
    assert testcmd.parse_pytest_counts("x\n1 failed, 11 passed, 2 errors in 1s\n") == (11, 3)
    assert testcmd.parse_pytest_counts("") == (0, 0)


def _result(log: str, rc: int) -> guest.GuestResult:
    text = (DATA / log).read_text(errors="replace")
    return guest.GuestResult(guest.GuestSpec(), rc, DATA / log, console.parse(text), "tcg", 1.0)


def test_expected_warn_passes_the_runner_self_test():
    sc = scenarios.get("runner-catches-warn")
    res = _result("guest-provoke-warn.log", 0)
    assert not res.ok
    assert testcmd.guest_verdict(sc, res) == []


def test_runner_self_test_fails_when_no_warn_was_seen():
    sc = scenarios.get("runner-catches-warn")
    assert testcmd.guest_verdict(sc, _result("guest-hello.log", 0))


def test_guest_script_failure_fails_the_scenario():
    sc = scenarios.get("fsdax-dev")
    problems = testcmd.guest_verdict(sc, _result("guest-fsdax-rebind.log", 1))
    assert "guest script exited 1" in problems


def test_dax_fs_log_passes_its_checks():
    sc = scenarios.get("fsdax-fs-dev")
    assert testcmd.guest_verdict(sc, _result("guest-fsdax-fs.log", 0)) == []


def test_dax_fs_on_a_template_with_refcount_zero_fails():
    """A kernel whose order-0 template had refcount 0: direct I/O from a
    DAX mapping WARNs in try_grab_folio() and the script stops."""
    sc = scenarios.get("fsdax-fs-dev")
    problems = testcmd.guest_verdict(sc, _result("guest-fsdax-fs-refcount0.log", 1))
    assert any(p.startswith("WARNING") and "try_grab_folio" in p for p in problems)
    assert "pages pinned per round [], expected at least 8192 in each of 3 rounds" in problems


def test_dax_fs_check_wants_every_round_used():
    sc = scenarios.get("fsdax-fs-dev")
    con = _result("guest-fsdax-fs.log", 0).console
    con.results = [r for r in con.results if r.get("files_used") != "2"]
    problems = " | ".join(sc.problems(con))
    assert "rounds of file use: expected ['0', '1', '2']" in problems


def test_devdax_check_wants_the_fork_check():
    sc = scenarios.get("devdax-2m")
    assert "the devdax mapping was not checked across fork" in \
        testcmd.guest_verdict(sc, _result("guest-devdax-rebind.log", 0))
    assert testcmd.guest_verdict(sc, _result("guest-devdax-fork.log", 0)) == []


def test_base_kernel_runs_only_the_scenarios_meant_for_it():
    names = [sc.name for sc in testcmd.base_scenarios("lab")]
    assert names == ["fsdax-fs-dev", "fsdax-fs-mem"]
    assert testcmd.base_scenarios("vm") == []
