"""The command line: each verb and option reaches its action with the
arguments it names, and bad input is an error, not a traceback."""
import pytest

from conftest import DATA

from memlab import (accel, bench, catalog, cli, commands, console, documents, guest, hostinfo,
                    kunit_runner, native, testcmd)


def calls(monkeypatch, module, name, rc=0):
    """Record the keyword arguments `module.name` is called with."""
    seen = []

    def fake(*args, **kwargs):
        seen.append((args, kwargs))
        return rc
    monkeypatch.setattr(module, name, fake)
    return seen


def test_bench_options_reach_the_guest_bench(monkeypatch):
    seen = calls(monkeypatch, bench, "run")
    assert cli.main(["bench", "--quick", "--mode", "wall", "--rounds", "3",
                     "--scenario", "fsdax-rebind", "--scenario", "boot-memmap",
                     "--pmem", "8"]) == 0
    assert seen == [((), {"mode": "wall", "quick": True, "rounds": 3,
                          "only": ["fsdax-rebind", "boot-memmap"], "pmem_gb": 8})]


def test_bench_native_is_its_own_verb(monkeypatch):
    seen, guests = calls(monkeypatch, native, "run"), calls(monkeypatch, bench, "run")
    assert cli.main(["bench", "native", "--device-gb", "10"]) == 0
    assert seen == [((), {"device_gb": 10.0})] and guests == []


def test_bench_native_refuses_the_guest_bench_options(monkeypatch, capsys):
    seen = calls(monkeypatch, native, "run")
    assert cli.main(["bench", "--mode", "wall", "native"]) == 1
    assert seen == []
    assert "--mode belong to the guest bench" in capsys.readouterr().err


def test_bench_scenarios_are_the_tables_rows(capsys):
    with pytest.raises(SystemExit) as e:
        commands.parser().parse_args(["bench", "--scenario", "nope"])
    assert e.value.code == 2
    assert "fsdax-rebind" in capsys.readouterr().err


def test_test_options(monkeypatch):
    seen = calls(monkeypatch, testcmd, "run")
    assert cli.main(["test", "--quick", "--skip", "arm64", "--skip", "vm"]) == 0
    assert seen == [((), {"quick": True, "full": False, "skip": {"arm64", "vm"}})]
    assert cli.main(["test", "--full"]) == 0
    assert seen[-1] == ((), {"quick": False, "full": True, "skip": set()})


def test_skip_choices_come_from_the_steps_and_the_architecture_table():
    choices = testcmd.skip_choices()
    assert choices[:len(testcmd.STEP_KINDS)] == list(testcmd.STEP_KINDS)
    assert {"lab", "vm", "debug", "arm64", "i386"} <= set(choices)
    with pytest.raises(SystemExit):
        commands.parser().parse_args(["test", "--skip", "highmem"])   # an i386 config, not a kernel name


def test_boot_obeys_an_explicit_accelerator(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(guest, "boot_and_run",
                        lambda spec: seen.append(spec) or pytest.skip("no boot"))
    monkeypatch.setattr(accel, "default_accel", lambda image: pytest.fail("probed"))
    with pytest.raises(pytest.skip.Exception):
        cli.main(["boot", "--script", "hello", "--accel", "tcg-icount", "--pmem", "4",
                  "--memory", "5"])
    assert (seen[0].accel, seen[0].script, seen[0].pmem_gb) == ("tcg-icount", "hello", 4)


def test_boot_auto_asks_the_probe(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(guest, "built_image", lambda spec: tmp_path)
    monkeypatch.setattr(accel, "default_accel", lambda image: "tcg")
    monkeypatch.setattr(guest, "boot_and_run",
                        lambda spec: seen.append(spec) or pytest.skip("no boot"))
    with pytest.raises(pytest.skip.Exception):
        cli.main(["boot", "--script", "hello"])
    assert seen[0].accel == "tcg"


def test_boot_of_a_scenario_takes_its_machine_and_its_checks(monkeypatch, tmp_path, capsys):
    seen = []
    monkeypatch.setattr(accel, "default_accel", lambda image: "tcg")
    monkeypatch.setattr(guest, "built_image", lambda spec: tmp_path)

    def boot(spec):
        seen.append(spec)
        return guest.GuestResult(spec, 0, tmp_path / "log", console.parse("MEMLAB done=1"),
                                 "tcg", 1.0)
    monkeypatch.setattr(guest, "boot_and_run", boot)
    assert cli.main(["boot", "--script", "kmem-memmap-on-memory", "--append", "quiet"]) == 1
    sc = catalog.get("kmem-memmap-on-memory")
    assert (seen[0].script, seen[0].pmem_gb, seen[0].memory_gb) == \
        ("kmem-online", sc.pmem_gb, sc.memory_gb)
    assert seen[0].append == [*sc.append, "quiet"]
    assert "scenario kmem-memmap-on-memory on patched lab (tcg): FAILED: scenario did not " \
        "report the hot-added memory blocks" in capsys.readouterr().out
    assert cli.main(["boot", "--script", "kmem-online", "--pmem", "4"]) == 1
    assert "scenario kmem-online boots its own machine: leave out --pmem" in capsys.readouterr().err
    assert len(seen) == 1


def test_kunit_defaults_to_the_archs_first_test_config(monkeypatch):
    from memlab import build
    built = calls(monkeypatch, build, "build")

    class Res:
        ok = True

        def summary(self):
            return "ok"
    monkeypatch.setattr(kunit_runner, "run", lambda config, arch: Res())
    assert cli.main(["kunit", "--arch", "arm64"]) == 0
    assert built == [(("patched", "kunit", "arm64"), {})]
    assert cli.main(["kunit"]) == 0
    assert built[-1] == (("patched", "lab", "x86_64"), {})


def test_report_check(monkeypatch):
    seen = calls(monkeypatch, documents, "run", rc=1)
    assert cli.main(["report", "--check"]) == 1
    assert seen == [((), {"check": True})]


def test_a_lab_error_is_a_message_and_exit_1(monkeypatch, capsys):
    def fail(**kwargs):
        raise bench.LabError("no kernel at build/out/x")
    monkeypatch.setattr(bench, "run", fail)
    assert cli.main(["bench"]) == 1
    assert "memlab bench: error: no kernel at build/out/x" in capsys.readouterr().err


def test_a_full_disk_is_an_error_not_a_traceback(monkeypatch, capsys):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/x/build/logs/mypy.log")
    monkeypatch.setattr(testcmd, "run", full)
    assert cli.main(["test", "--quick"]) == 1
    err = capsys.readouterr().err
    assert "no space left on the device that holds /x/build/logs/mypy.log" in err
    assert "Traceback" not in err


def test_other_os_errors_are_not_swallowed(monkeypatch):
    def broken(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(testcmd, "run", broken)
    with pytest.raises(PermissionError):
        cli.main(["test", "--quick"])


def test_check_judges_a_saved_console_without_booting(capsys):
    log = str(DATA / "guest-fsdax-rebind.log")
    rc = cli.main(["check", "fsdax-dev", log])
    out = capsys.readouterr().out
    assert rc == 0 and f"scenario fsdax-dev (lab), {log}: ok" in out
    # The same console judged as another scenario's run fails, by name.
    rc = cli.main(["check", "kmem-online", log])
    assert rc == 1 and "FAILED: scenario did not report the hot-added memory blocks" in \
        capsys.readouterr().out


def test_check_of_a_missing_log_or_an_unknown_scenario_is_a_clear_error(capsys, tmp_path):
    assert cli.main(["check", "fsdax-dev", str(tmp_path / "none.log")]) == 1
    assert "memlab check: error: cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["check", "nope", str(tmp_path / "none.log")])
