r"""`memlab report`: the documents (README.md, docs/, the cover letter) are
written from their templates in lab/documents/, which mirror the
repository's layout. A template is the document with every number taken
from results/ left as a name:

- a line `{{table NAME}}` becomes that table of tables.py: markdown in a
  `.md` document, plain text (for mail) in the cover letter;
- `{{KIND:ARG:...}}` anywhere becomes a figure of figures.py;
- `\{{` is two literal braces.

A document that differs from its template's rendering is stale: `memlab
report --check` fails, and so does pytest. So every number a reader sees
comes from a result file, and one edited by hand in a document is found.
The authors' text lives in the templates; `hand_numbers()` flags a
measured-looking number typed into one.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import figures, kernel_base, paths, tables
from .runner import LabError, say

TEMPLATES = paths.TEMPLATES
ROOT = paths.REPO       # where the documents are written
_TABLE_LINE = re.compile(r"^\{\{table (?P<name>[\w-]+)\}\}$")
# `\{{` stands for two literal braces (a document that shows the syntax).
_FIGURE = re.compile(r"(?<!\\)\{\{(?P<name>[\w.:|/ +-]+?)\}\}")
_LITERAL = "\\{{"


def templates() -> list[Path]:
    """Every template (an editor's hidden or backup file is none)."""
    return sorted(p for p in TEMPLATES.rglob("*") if p.is_file()
                  and not p.name.startswith(".") and not p.name.endswith(("~", ".swp")))


def output_of(template: Path) -> Path:
    return ROOT / template.relative_to(TEMPLATES)


def render(text: str, markdown_doc: bool) -> str:
    out: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        m = _TABLE_LINE.match(line.strip())
        if m:
            out += block(m.group("name"), markdown_doc)
            continue
        line = _FIGURE.sub(lambda f: figures.value(f.group("name")), line)
        if re.search(r"(?<!\\)\{\{", line):
            raise LabError(f"template line {number}: a `{{{{` that names no figure or "
                           f"table (write `\\{{{{` for literal braces): {line.strip()}")
        out.append(line.replace(_LITERAL, "{{"))
    return "\n".join(out)


def block(name: str, markdown_doc: bool) -> list[str]:
    build = tables.BLOCKS.get(name)
    if build is None:
        raise LabError(f"unknown table {name!r} (known: {', '.join(tables.BLOCKS)})")
    made = build()
    if isinstance(made, tables.Table):
        return made.markdown() if markdown_doc else made.text(name)
    return made


# A measured-looking number typed into a template's prose: any decimal but
# a version, or a count with a unit of time, speed or share. Names and
# sizes (6.12, x86-64, arm64, patch 8, 2 MB pages) are not measurements.
_UNITS = (r"ns|us|ms|s|sec|secs|seconds?|min|mins|minutes?|hours?|%|x(?!\s*\d)|times|"
          r"[KMGT]i?B/s|instructions?")
_HAND_NUMBER = re.compile(rf"(?<![\w.{{:-])(\d+\.\d+|\d+)\s*({_UNITS})(?![\w/])"
                          r"|(?<![\w.{:-])\d+\.\d+(?![\w.])")
# Kernel versions: the bases', and the release mainline's clear_pages()
# came with.
_VERSIONS = re.compile(r"\b(" + "|".join(re.escape(v) for v in [*kernel_base.BASES, "7.0"])
                       + r")\b")


def hand_numbers(text: str) -> list[str]:
    """The lines of a template that type a measured-looking number."""
    found = []
    for line in text.split("\n"):
        prose = _VERSIONS.sub("", _FIGURE.sub("", line))
        if _TABLE_LINE.match(line) or not _HAND_NUMBER.search(prose):
            continue
        found.append(line.strip())
    return found


def stale() -> list[tuple[Path, str]]:
    """(document, its fresh text) for every document that differs."""
    out = []
    for template in templates():
        doc = output_of(template)
        fresh = render(template.read_text(), doc.suffix == ".md")
        if not doc.exists() or doc.read_text() != fresh:
            out.append((doc, fresh))
    return out


def refresh() -> None:
    """After a command recorded results: rewrite the documents that cite
    them. A document that cannot be written is a warning here, not a
    failure of the measurement (`memlab report` then names the problem).
    Another base's results are not what the documents cite: its commands
    leave them alone."""
    if paths.BASE:
        return
    try:
        run()
    except LabError as e:
        say(f"WARNING: the documents were not rewritten: {e}")


def run(check: bool = False) -> int:
    """Write every document from its template (or, with check, only say
    which would change)."""
    if paths.BASE:
        raise LabError(f"the documents are made from the default base's results: run "
                       f"`memlab report` without MEMLAB_BASE (now {paths.BASE})")
    changed = stale()
    for doc, fresh in changed:
        rel = doc.relative_to(ROOT)
        if check:
            say(f"{rel}: out of date")
        else:
            doc.parent.mkdir(parents=True, exist_ok=True)
            doc.write_text(fresh)
            say(f"{rel}: written from {TEMPLATES.relative_to(paths.REPO)}/{rel}")
    if check and changed:
        say("a document differs from its template and results/: edit the template in "
            f"{TEMPLATES.relative_to(paths.REPO)}/, then run `memlab report`")
        return 1
    say(f"{len(templates())} documents, {len(templates()) - len(changed)} already up to date")
    return 0
