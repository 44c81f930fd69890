"""What code a record measured, and the documents saying when it changed."""
import json

from memlab import provenance, tables
from memlab.results import Result

from conftest import DATA


def test_a_series_hash_covers_its_code_not_its_messages(tmp_path):
    patch = (DATA / "broken.patch").read_text()
    (tmp_path / "0001-x.patch").write_text(patch)
    (tmp_path / "series").write_text("0001-x.patch\n")
    from memlab.series import Series
    before = provenance.code_hash(Series(tmp_path))
    (tmp_path / "0001-x.patch").write_text(patch.replace("Subject:", "Subject: reworded"))
    assert provenance.code_hash(Series(tmp_path)) == before
    (tmp_path / "0001-x.patch").write_text(patch + "+one more line\n")
    assert provenance.code_hash(Series(tmp_path)) != before


def test_a_record_of_todays_code_is_current_and_one_changed_by_hand_stale(monkeypatch):
    today = {"product": "aaaaaaaaaaaa", "stable": "bbbbbbbbbbbb", "lab": "cccccccccccc"}
    monkeypatch.setattr(provenance, "series_hashes", lambda base=None: today)
    record = provenance.Provenance("abc1234", dict(today), "6.12 6.12.118-1", "cpu").to_json()
    assert provenance.state(record).endswith(": current")
    record["series"]["product"] = "000000000000"
    assert provenance.state(record).startswith(
        "STALE: the code changed since (product series 000000000000 -> aaaaaaaaaaaa")
    assert provenance.state(None) == "provenance not recorded"


def test_a_changed_hash_in_a_cited_record_turns_report_check_red(monkeypatch, tmp_path):
    from memlab import paths
    monkeypatch.setattr(paths, "REPO", tmp_path)
    """The README's headline table cites results/icount/bench.json: with
    the record's series hash changed by hand, its caption renders STALE and
    the committed document is out of date."""
    source = paths.RESULTS / "icount" / "bench.json"
    data = json.loads(source.read_text())
    today = provenance.series_hashes()
    data["provenance"] = provenance.Provenance("abc1234", dict(today), "b", "cpu").to_json()
    fresh = tmp_path / "icount" / "bench.json"
    fresh.parent.mkdir()
    fresh.write_text(json.dumps(data))
    current = tables._bench_caption(fresh, Result.load(fresh))
    data["provenance"]["series"]["product"] = "000000000000"
    fresh.write_text(json.dumps(data))
    changed = tables._bench_caption(fresh, Result.load(fresh))
    assert "current" in current and "STALE" in changed


def test_a_record_of_another_base_is_compared_with_that_bases_series():
    from memlab import kernel_base, provenance
    other = kernel_base.BASES[kernel_base.MAINLINE]
    record = provenance.Provenance("c", provenance.series_hashes(other),
                                   f"{other.name} {other.version}", "cpu").to_json()
    assert provenance.state(record).endswith(": current")
    record["series"]["product"] = "0" * 12
    assert provenance.state(record).startswith("STALE")
