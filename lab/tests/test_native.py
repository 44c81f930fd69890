"""Native benchmark: offsets from kbuild's assembly, GB/s and % of limit."""
import json
import subprocess

import pytest

from memlab import documents, figures, hostinfo, native, provenance, tables
from memlab.runner import LabError


def test_offsets_from_kbuild_assembly():
    asm = ('\t.ascii "->STRUCT_PAGE_SIZE $64 sizeof(struct page)"\n'
           '\t.ascii "->PAGE_MAPCOUNT $48 offsetof(struct page, _mapcount)"\n'
           '\t.ascii "->PAGE_ZONES_PGSHIFT $61 (((64 - 0) - 0) - 3)"\n')
    assert native.parse_offsets(asm) == {"STRUCT_PAGE_SIZE": 64, "PAGE_MAPCOUNT": 48,
                                        "PAGE_ZONES_PGSHIFT": 61}


def test_summary_relates_each_kernel_to_the_best_fill():
    recs = [{"struct_page_size": 64},
            {"group": "limit", "name": "movnti_fill", "threads": 1, "bytes": 10**9,
             "seconds": [0.1, 0.1, 0.2]},
            {"group": "limit", "name": "vector_nt_fill", "threads": 1, "bytes": 10**9,
             "seconds": [0.2, 0.2, 0.2]},
            {"group": "zero", "name": "stosb_fill", "threads": 1, "bytes": 10**9,
             "seconds": [0.05, 0.05, 0.05]},
            {"group": "memmap", "name": "slow", "threads": 1, "bytes": 10**9,
             "seconds": [0.4, 0.5, 0.4]}]
    rows = native.summarize(recs)
    slow = next(r for r in rows if r["name"] == "slow")
    assert round(slow["gbps"], 3) == 2.5
    assert round(slow["pct_of_limit"]) == 25
    # A zero fill is faster by other means: never the limit, never relative.
    assert next(r for r in rows if r["name"] == "stosb_fill")["pct_of_limit"] is None
    assert "| memmap | slow | 1 | 400.0 | 400.0-500.0 | 2.50 | 25% |  |" in native.markdown(
        {"struct_page_size": 64, "device_gb": 100.0, "memmap_bytes": 1 << 30}, rows, "cpu")


def test_two_threads_are_compared_with_one():
    recs = [{"group": "memmap", "name": "template_nt", "threads": t, "bytes": 10**9,
             "seconds": [s]} for t, s in ((1, 0.08), (2, 0.05))]
    table = native.markdown({"struct_page_size": 64, "device_gb": 100.0,
                             "memmap_bytes": 1 << 30}, native.summarize(recs), "cpu")
    assert "| memmap | template_nt | 2 | 50.0 | 50.0-50.0 | 20.00 |  | 0.62 |" in table


def _clear_records() -> list[dict]:
    def rec(group: str, name: str, s: float) -> dict:
        return {"group": group, "name": name, "threads": 1, "bytes": 10**9, "seconds": [s]}
    return [{"checked": ["stosb", "movnti", "vector_nt"]},
            {"struct_page_size": 64, "device_gb": 100.0, "memmap_bytes": 1 << 30,
             "vector": "ymm", "clzero": False, "sequence_gb": 0},
            rec("clear 32M", "stosb", 0.02), rec("clear 32M", "movnti", 0.01),
            rec("clear 32M", "vector_nt", 0.008),
            rec("clear 2M + read run", "stosb", 0.04), rec("clear 2M + read run", "movnti", 0.05),
            rec("clear 2M + read run", "vector_nt", 0.05)]


def test_clearing_groups_are_set_against_rep_stosb_and_their_own_limit():
    rows = {(r["group"], r["name"]): r for r in native.summarize(_clear_records())}
    assert rows[("clear 32M", "movnti")]["vs_stosb"] == 2.0
    assert rows[("clear 32M", "movnti")]["pct_of_limit"] == 80.0
    assert round(rows[("clear 2M + read run", "movnti")]["vs_stosb"], 6) == 0.8
    # Not the memmap limit: a clearing group has its own.
    assert rows[("clear 32M", "stosb")]["pct_of_limit"] == 40.0


def test_clearing_table_lists_each_group_once_and_says_what_did_not_run():
    recs = _clear_records()
    meta = recs[1]
    text = native.clearing_markdown(meta, native.summarize(recs))
    assert "| clear 32M | 50.0 | 100.0 | 125.0 | 2.00x |" in text
    assert "| clear 2M + read run | 25.0 | 20.0 | 20.0 | 0.80x |" in text
    assert "CLZERO absent" in text and "16G sequence was not run" in text
    # The memmap table leaves the clearing groups to their own table.
    assert "clear 32M" not in native.markdown(meta, native.summarize(recs), "cpu").split("####")[0]


def test_each_cpu_keeps_its_record_and_the_hosts_table_reads_them_all(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "HOSTS", tmp_path / "native-hosts")
    native.HOSTS.mkdir()
    for slug, cpu in (("amd-family25-model1", "AMD A"), ("intel-family6-model143", "Intel B")):
        (native.HOSTS / f"{slug}.json").write_text(json.dumps(
            {"date": "2026-11-27 10:00:00 UTC", "host_cpu": cpu, "records": _clear_records()}))
    monkeypatch.setattr(tables.paths, "REPO", tmp_path)
    table = tables.native_hosts_table()
    assert [r[0] for r in table.rows] == ["AMD A", "Intel B"]
    by_label = dict(zip(table.header, table.rows[0]))
    # MOVNTI twice as fast as REP STOSB on 32 MB runs; no CLZERO measured.
    assert by_label["MOVNTI vs REP STOSB, 32 MB runs"] == "2.00x"
    assert by_label["CLZERO vs REP STOSB, 32 MB runs"] == "n/a"
    assert "-family" in hostinfo.cpu_slug() and "-model" in hostinfo.cpu_slug()


def test_the_hosts_table_wants_a_record(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "HOSTS", tmp_path / "native-hosts")
    monkeypatch.setattr(tables.paths, "REPO", tmp_path)
    with pytest.raises(LabError, match="no record"):
        tables.native_hosts_table()


def test_a_cpu_figure_reads_that_cpus_record(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "HOSTS", tmp_path / "native-hosts")
    native.HOSTS.mkdir(parents=True)
    slower = [dict(r, seconds=[0.04]) if r.get("name") == "stosb" else r
              for r in _clear_records()]
    for slug, records in (("intel-family6-model143", _clear_records()),
                          ("intel-family6-model207", slower)):
        (native.HOSTS / f"{slug}.json").write_text(json.dumps(
            {"date": "2026-11-27 10:00:00 UTC", "host_cpu": slug, "records": records}))
    # Each CPU's figure from its own record.
    assert documents.render(
        "{{native-host:intel-family6-model143:clear 32M:movnti:stosb}}x", True) == "2.00x"
    assert documents.render(
        "{{native-host:intel-family6-model207:clear 32M:movnti:stosb}}x", True) == "4.00x"
    # No CLZERO on that CPU: a clear error, not a made-up ratio.
    with pytest.raises(LabError, match="no clzero and stosb"):
        documents.render("{{native-host:intel-family6-model143:clear 32M:clzero:stosb}}", True)
    with pytest.raises(LabError, match="no native record of CPU 'nosuch'.*model143"):
        documents.render("{{native-host:nosuch:clear 32M:movnti:stosb}}", True)


def _run_on(monkeypatch, tmp_path, slug: str, clzero: bool = True) -> list:
    """native.run() on a CPU named @slug, the benchmark itself stubbed; the
    plots it asked for."""
    monkeypatch.setattr(native, "HOSTS", tmp_path / "native-hosts")
    monkeypatch.setattr(native.paths, "RESULTS", tmp_path)
    monkeypatch.setattr(native.paths, "REPO", tmp_path)
    monkeypatch.setattr(native, "built_bench", lambda: (tmp_path / "bench", {"STRUCT_PAGE_SIZE": 64}))
    records = [dict(r, clzero=clzero) if "struct_page_size" in r else r for r in _clear_records()]
    out = "\n".join(json.dumps(r) for r in records)
    monkeypatch.setattr(native, "run_quiet", lambda *a, **k: subprocess.CompletedProcess(
        a, 0, stdout=out, stderr=""))
    monkeypatch.setattr(native.hostinfo, "cpu_slug", lambda: slug)
    monkeypatch.setattr(native.hostinfo, "cpu_detail", lambda: "a CPU")
    monkeypatch.setattr(native.provenance, "now", lambda *a: provenance.Provenance(
        "c0ffee", {}, "6.12 6.12.118-1", "a CPU"))
    plotted: list = []
    monkeypatch.setattr(native.report, "write_plots",
                        lambda src, out: plotted.append(src) or [out / "native.png"])
    assert native.run(10) == 0
    return plotted


def test_another_cpus_run_adds_its_record_and_leaves_the_documents_one(monkeypatch, tmp_path):
    plotted = _run_on(monkeypatch, tmp_path, "intel-family6-model143", clzero=False)
    assert sorted(p.name for p in native.HOSTS.iterdir()) == [
        "intel-family6-model143.json", "intel-family6-model143.md"]
    assert plotted == []


def test_the_documented_cpus_run_draws_the_documents_plot(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "DOCUMENTED", tmp_path / "native-hosts" /
                        f"{native.DOCUMENTED_CPU}.json")
    plotted = _run_on(monkeypatch, tmp_path, native.DOCUMENTED_CPU)
    assert native.DOCUMENTED.exists() and native.DOCUMENTED.with_suffix(".md").exists()
    assert plotted == [native.DOCUMENTED]


def test_the_documented_cpu_without_clzero_replaces_nothing(monkeypatch, tmp_path):
    with pytest.raises(LabError, match="without CLZERO"):
        _run_on(monkeypatch, tmp_path, native.DOCUMENTED_CPU, clzero=False)
    assert not (native.HOSTS / f"{native.DOCUMENTED_CPU}.json").exists()


def test_the_onlining_policy_is_set_against_the_faster_variant_with_its_range():
    def rec(group, name, seconds):
        return {"group": group, "name": name, "threads": 1, "bytes": 1 << 30,
                "seconds": seconds}
    records = [rec("online 128M", "one_pass_plain", [0.12, 0.10, 0.11]),
               rec("online 128M", "one_pass_stream", [0.09, 0.08, 0.10]),
               rec("online 128M", "one_pass_plain_checked", [0.16, 0.15, 0.20]),
               rec("online 128M", "one_pass_stream_checked", [0.12, 0.14, 0.13]),
               rec("online 2G", "one_pass_plain_checked", [0.30, 0.30, 0.30]),
               rec("online 2G", "one_pass_stream_checked", [0.20, 0.20, 0.20])]
    policy = native.online_policy(native.summarize(records), struct_page_size=64)
    got = [(p["group"], p["checked"], p["choice"], round(p["over_best"], 3))
           for p in policy]
    # A 128 MB block's memmap (2 MB) is under the plain-store limit only
    # where its tails are checked; a 2 GB block's (32 MB) never is.
    assert got == [("online 128M", False, "stream", 0.0),
                   ("online 128M", True, "plain", 0.231),
                   ("online 2G", True, "stream", 0.0)]
    assert policy[1]["ranges"] == {"plain": (0.15, 0.20), "stream": (0.12, 0.14)}
