"""`memlab ci`: every step timed and recorded, cold or warm by the cache."""
import pytest

from memlab import ci, cli, documents, runrecord, testcmd
from memlab.runner import LabError


def fake_test(steps):
    def execute(*args, **kwargs):
        return testcmd.TestRun(steps, 12.0)
    return execute


@pytest.fixture
def record_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(ci, "CI_RESULTS", tmp_path)
    monkeypatch.setattr(runrecord, "TEST_RESULTS", tmp_path / "test")
    monkeypatch.setattr(runrecord, "head_commit", lambda: "abc1234")
    monkeypatch.setattr(documents, "run", lambda check=False: 0)
    return tmp_path


def test_a_run_with_an_empty_cache_is_recorded_as_cold(record_dir, monkeypatch):
    monkeypatch.setattr(ci, "ccache_files", lambda: 0)
    monkeypatch.setattr(testcmd, "execute", fake_test([testcmd.Step("pytest", 5, 0, [], 3.0),
                                                       testcmd.Step("build lab", 1, 0, [], 600.0)]))
    monkeypatch.setattr(testcmd, "provenance_of_plan", lambda: {"commit": "abc1234"})
    assert ci.run() == 0
    rec = runrecord.RunRecord.load(record_dir / "cold.json")
    assert rec.cold and rec.exit_code == 0 and rec.commit == "abc1234"
    assert rec.provenance == {"commit": "abc1234"}
    assert [(s.name, s.passed, s.seconds) for s in rec.steps] == [
        ("pytest", 5, 3.0), ("build lab", 1, 600.0)]
    assert not (record_dir / "warm.json").exists()
    assert runrecord.RunRecord.load(record_dir / "test" / "default.json").step("pytest").passed == 5


def test_a_failed_test_records_nothing(record_dir, monkeypatch, capsys):
    monkeypatch.setattr(ci, "ccache_files", lambda: 1234)
    monkeypatch.setattr(testcmd, "execute", fake_test([testcmd.Step("pytest", 4, 1, [], 3.0)]))
    monkeypatch.setattr(testcmd, "provenance_of_plan", lambda: {})
    assert cli.main(["ci"]) == 1
    # A failed run leaves the last passing records as they were.
    assert not (record_dir / "warm.json").exists() and not (record_dir / "test").exists()
    assert "memlab: 4 passed, 1 failed" in capsys.readouterr().out


def test_a_damaged_record_is_an_error(tmp_path):
    (tmp_path / "cold.json").write_text('{"date": 1}')
    with pytest.raises(LabError, match="not a run record"):
        runrecord.RunRecord.load(tmp_path / "cold.json")
