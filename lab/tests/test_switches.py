"""The off switches: what the kernel's reports must say with each."""
import pytest

from memlab import catalog, console, switches

BOOT = "[    0.0] mminit::memmap_init node 0 zone Normal: 32768 pages {path}, {state}\n"
DEFERRED = "[    2.0] mminit::memmap_init node 0 zone Normal: deferred pages {path}, {state}\n"
HOT = "[    9.0] mminit::memmap_init node 0 zone Movable: 32768 pages {path}, {state}\n"
DEVICE = ("[    8.0] memmap_init_zone_device initialised 257536 pages in 1ms, {path}, "
          "up to {threads} threads\n")
CLEAR = "[    0.5] clear_pages: runs of 8 to 32 MB with {how}\n"
T, S, P = switches.TEMPLATE, switches.STREAMED, switches.PAGE_BY_PAGE

# What a kernel prints with each switch off (and with none): the console the
# check must accept.
REPORTS = {
    "": dict(boot=(S, "free"), deferred=(T, "free"), hot=(S, "free"), device=S,
             threads=2, clear="MOVNTI"),
    "memmap_template": dict(boot=(P, "free"), deferred=(P, "free"), hot=(P, "free"),
                            device=P, threads=2, clear="MOVNTI"),
    "memmap_stream": dict(boot=(T, "free"), deferred=(T, "free"), hot=(T, "free"),
                          device=T, threads=2, clear="MOVNTI"),
    "mm_init.zone_device_init_threads": dict(boot=(S, "free"), deferred=(T, "free"),
                                             hot=(S, "free"), device=S, threads=1,
                                             clear="MOVNTI"),
    "memmap_single_pass": dict(boot=(S, "in use"), deferred=(T, "in use"),
                               hot=(T, "offline"), device=S, threads=2, clear="MOVNTI"),
    "clear_pages_stream": dict(boot=(S, "free"), deferred=(T, "free"), hot=(S, "free"),
                               device=S, threads=2, clear="one string operation"),
}


def kernel_console(r: dict) -> console.Console:
    text = ((CLEAR.format(how=r["clear"]) if r["clear"] else "")
            + BOOT.format(path=r["boot"][0], state=r["boot"][1])
            + DEFERRED.format(path=r["deferred"][0], state=r["deferred"][1])
            + DEVICE.format(path=r["device"], threads=r["threads"])
            + HOT.format(path=r["hot"][0], state=r["hot"][1]) * 8)
    return console.parse(text)


def test_every_switch_has_its_expected_reports():
    assert set(REPORTS) - {""} == {sw.name for sw in switches.SWITCHES}


@pytest.mark.parametrize("switch", sorted(REPORTS))
def test_a_kernel_that_took_the_paths_the_switch_wants_passes(switch):
    assert switches.check(kernel_console(REPORTS[switch]), switch, 2, "MOVNTI") == []


@pytest.mark.parametrize("switch", sorted(set(REPORTS) - {""}))
def test_a_switch_that_does_nothing_fails_its_check(switch):
    # The kernel ignored the parameter: every fast path still ran.
    problems = switches.check(kernel_console(REPORTS[""]), switch, 2, "MOVNTI")
    assert problems


@pytest.mark.parametrize("switch", sorted(set(REPORTS) - {""}))
def test_a_switch_that_turns_off_more_than_its_own_path_fails(switch):
    # Every other switch's reports judged as if only @switch were off.
    for other in set(REPORTS) - {"", switch}:
        assert switches.check(kernel_console(REPORTS[other]), switch, 2, "MOVNTI"), other


def test_a_kernel_that_reports_nothing_fails():
    problems = switches.check(console.parse(""), "", 2, "MOVNTI")
    assert "no boot memmap init reported (mminit_loglevel=3)" in problems
    assert "no ZONE_DEVICE memmap init reported" in problems
    assert "large runs are cleared with None, expected MOVNTI" in problems


def test_each_switch_boots_its_own_scenario_with_its_parameter():
    for sw in switches.SWITCHES:
        sc = catalog.get(f"without-{sw.name}")
        assert sc.script == "fast-paths" and sc.env["SWITCH"] == sw.name
        assert sw.param in sc.append and "mminit_loglevel=3" in sc.append
    assert catalog.get("fast-paths").env["SWITCH"] == ""


def test_captured_consoles_of_the_defer_kernel_pass_their_own_switch_only():
    from conftest import DATA
    from memlab.checks import check_fast_paths
    for log, switch in (("guest-fast-paths.log", ""),
                        ("guest-without-memmap_single_pass.log", "memmap_single_pass")):
        con = console.parse((DATA / log).read_text())
        assert not con.failures
        env = {"SWITCH": switch, "CPUS": "2"}
        assert check_fast_paths(con, env) == [], log
        for other in set(REPORTS) - {switch}:
            assert check_fast_paths(con, {**env, "SWITCH": other}), (log, other)


def test_a_series_offers_the_switches_its_kernel_parameters_document(monkeypatch):
    assert switches.offered() == switches.SWITCHES
    monkeypatch.setattr(switches.kernel_base, "current",
                        lambda: switches.kernel_base.BASES["7.2"])
    switches.offered.cache_clear()
    try:
        mainline = switches.offered()
        assert switches.get("clear_pages_stream") not in mainline
        assert switches.get("memmap_single_pass") in mainline
        # Mainline clears large runs its own way and prints no report.
        assert switches.check(kernel_console({**REPORTS[""], "clear": ""}),
                              "", 2, "MOVNTI") == []
        assert switches.check(kernel_console(REPORTS[""]), "", 2, "MOVNTI") == [
            "large runs are reported cleared with MOVNTI, which this series does not do"]
    finally:
        switches.offered.cache_clear()
