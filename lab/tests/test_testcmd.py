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
