"""`memlab report`: README.md, docs/ and the cover letter are their
templates rendered with results/, and nothing measured is typed by hand."""
import shutil

import pytest

from memlab import documents, paths, tables
from memlab.runner import LabError


def test_every_document_is_its_template_rendered_with_the_results():
    # A number edited by hand in a document, or a result re-measured
    # without `memlab report`, fails here.
    assert documents.templates(), "no templates in lab/documents/"
    stale = [str(doc.relative_to(paths.REPO)) for doc, _ in documents.stale()]
    assert not stale, f"run `memlab report`: {stale} differ from their templates"


def _copy_documents(root):
    for template in documents.templates():
        rel = template.relative_to(documents.TEMPLATES)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.REPO / rel, root / rel)


def test_a_number_changed_by_hand_in_prose_turns_the_check_red(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "ROOT", tmp_path)
    _copy_documents(tmp_path)
    assert documents.run(check=True) == 0
    readme = tmp_path / "README.md"
    figure = documents.render("{{bench:icount-quick:fsdax-rebind:per_page:patched}}", True)
    sentence = next(ln for ln in readme.read_text().splitlines()
                    if figure in ln and not ln.startswith("|"))
    readme.write_text(readme.read_text().replace(sentence, sentence.replace(figure, "7.5"), 1))
    assert documents.run(check=True) == 1
    assert documents.run() == 0 and documents.run(check=True) == 0
    assert figure in readme.read_text()


def test_no_template_types_a_measured_number():
    typed = {str(t.relative_to(documents.TEMPLATES)): found for t in documents.templates()
             if (found := documents.hand_numbers(t.read_text()))}
    assert not typed, f"measured-looking numbers typed by hand (use a figure): {typed}"


@pytest.mark.parametrize("line", ["the init took 12.5 ms", "a ratio of 0.290 here",
                                  "about 16 GB/s", "in 43 minutes", "ran at 90% of it"])
def test_the_lint_finds_a_typed_measurement(line):
    assert documents.hand_numbers(line) == [line]


@pytest.mark.parametrize("line", ["Linux 6.12 on x86-64", "patch 8 and 2 MB pages",
                                  "{{bench:icount:fsdax-rebind:ratio}} of 6.12's",
                                  "16 MOVNTI per 2 pages, arm64"])
def test_the_lint_leaves_names_and_figures_alone(line):
    assert documents.hand_numbers(line) == []


def test_figures_tables_and_literal_braces_render():
    ratio = documents.render("{{bench:icount:fsdax-rebind:ratio}}", True)
    assert 0 < float(ratio) < 1
    assert documents.render("write \\{{table NAME}} to get one", True) == \
        "write {{table NAME}} to get one"
    text = documents.render("{{table references}}", False)
    assert text.startswith("  memlab report references: lab/data/postings.json: the postings")
    md = documents.render("{{table references}}", True)
    assert "| nd_pmem 100 GB rebind |" in md


def test_unknown_names_are_clear_errors():
    with pytest.raises(LabError, match="unknown table 'nope'"):
        documents.render("{{table nope}}", True)
    with pytest.raises(LabError, match="unknown figure 'nope:x'"):
        documents.render("a {{nope:x}} b", True)
    with pytest.raises(LabError, match="no row 'nope'"):
        documents.render("{{bench:icount:nope:ratio}}", True)
    with pytest.raises(LabError, match="wrong arguments"):
        documents.render("{{native:memmap}}", True)


def test_a_row_keeps_one_unit():
    assert tables.duration(9924.8, 34183.5) == "9.92 ms"
    assert tables.duration(823.4) == "823.4 us"
    assert tables.duration(17353000.0) == "17.353 s"


def test_a_missing_result_file_is_a_clear_error(tmp_path):
    with pytest.raises(LabError, match="not a bench result"):
        tables.bench_table(tmp_path / "bench.json")


def test_the_verb_reference_is_the_command_lines_own_help():
    lines = tables.cli_block()
    assert any(ln.startswith("- `memlab bench native") for ln in lines)
    assert any("`--full`" in ln for ln in lines)


@pytest.mark.parametrize("template, message", [
    ("{{native:memmap:slow:one:ms}}", "cannot be read from results"),
    ("{{test:default:sum:kunit:bogus}}", "cannot be read from results"),
    ("{{bench:icount:fsdax-rebind:ratio,x}}", "names no figure or table"),
    ("{{bench-meta:wall:nope}}", "unknown field 'nope'"),
])
def test_a_figure_that_cannot_be_read_is_a_clear_error(template, message):
    with pytest.raises(LabError, match=message):
        documents.render(template, True)


def test_a_table_line_may_carry_stray_spaces():
    assert documents.render("{{table references}}  ", True) == \
        documents.render("{{table references}}", True)


def test_breaks_without_their_fields_are_an_error(tmp_path, monkeypatch):
    from memlab import figures
    monkeypatch.setattr(figures, "BREAKS", tmp_path / "breaks.json")
    (tmp_path / "breaks.json").write_text('{"kunit": [{"break": "x"}]}')
    with pytest.raises(LabError, match="lacks its 'break' text or its 'caught_by' list"):
        documents.render("{{breaks:kunit:count}}", True)


def test_editor_files_are_no_templates(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "TEMPLATES", tmp_path)
    for name in ("README.md", ".README.md.swp", "README.md~"):
        (tmp_path / name).write_text("x")
    assert [p.name for p in documents.templates()] == ["README.md"]
