"""Native benchmark: offsets from kbuild's assembly, GB/s and % of limit."""
from memlab import native


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
            {"group": "limit", "name": "ymm_nt_fill", "threads": 1, "bytes": 10**9,
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
