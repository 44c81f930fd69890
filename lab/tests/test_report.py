"""`memlab report`: the documents' tables are generated from results/, and
nothing else in the documents is touched."""
import pytest

from memlab import paths, report
from memlab.runner import LabError


def test_the_documents_match_the_results():
    # The README and the cover letter carry what results/ holds: a number
    # edited by hand, or a result re-measured without `memlab report`, fails.
    for doc, markdown_doc in report.DOCUMENTS.items():
        text = doc.read_text()
        fresh, names = report.regenerate(text, markdown_doc)
        assert names, f"{doc.name} has no generated tables"
        assert fresh == text, f"{doc.name} is stale: run `memlab report`"


def test_a_hand_edited_number_is_found():
    text = (paths.REPO / "README.md").read_text()
    edited = text.replace("| 136.76 ms | 39.71 ms | 0.290 |", "| 136.76 ms | 35.00 ms | 0.256 |")
    assert edited != text
    fresh, _ = report.regenerate(edited, True)
    assert fresh == text


def test_text_blocks_end_at_the_blank_line_and_prose_stays():
    doc = "Before.\n\n  memlab report references: old\n  old line\n\nAfter.\n"
    fresh, names = report.regenerate(doc, False)
    assert names == ["references"]
    assert fresh.startswith("Before.\n\n  memlab report references: the reference")
    assert "old line" not in fresh and fresh.endswith("\n\nAfter.\n")
    assert "nd_pmem 100 GB rebind" in fresh


def test_bad_markers_are_errors():
    with pytest.raises(LabError, match="unknown report table 'nope'"):
        report.regenerate("<!-- memlab report: nope -->\n<!-- end of memlab report -->\n", True)
    with pytest.raises(LabError, match="no end marker"):
        report.regenerate("<!-- memlab report: references -->\n| a |\n", True)
    # A block without its end must not swallow the next block.
    with pytest.raises(LabError, match="'references' has no end marker"):
        report.regenerate("<!-- memlab report: references -->\nprose\n"
                          "<!-- memlab report: references -->\n<!-- end of memlab report -->\n",
                          True)


def test_every_generated_table_is_found_again():
    # A wrapped caption leaves its first line as the marker, name and all.
    for doc, markdown_doc in report.DOCUMENTS.items():
        once, names = report.regenerate(doc.read_text(), markdown_doc)
        assert report.regenerate(once, markdown_doc)[1] == names


def test_a_row_keeps_one_unit():
    assert report.duration(9924.8, 34183.5) == "9.92 ms"
    assert report.duration(823.4) == "823.4 us"
    assert report.duration(17353000.0) == "17.353 s"


def test_a_missing_result_file_is_a_clear_error(tmp_path):
    with pytest.raises(LabError, match="not a bench result"):
        report.bench_table(tmp_path / "bench.json")
