"""The patch series on disk (patches/series, patches/lab/series)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .runner import LabError

COVER_LETTER = "0000-cover-letter.patch"

# How an operator applies a base's product series to a git tree of its
# pristine source: the README gives this very line, and `memlab test` runs
# it on a fresh checkout of tag base, with the placeholder replaced by this
# checkout's location. --empty=drop skips the cover letter.
CHECKOUT_PLACEHOLDER = "/path/to/memlab"


def apply_command(series: Path, repo: Path) -> str:
    """The `git am` line of the series in @series, of the checkout @repo."""
    return (f"git am --empty=drop {CHECKOUT_PLACEHOLDER}/"
            f"{(series / '0*.patch').relative_to(repo)}")


@dataclass(frozen=True)
class Series:
    """An ordered list of patch files in one directory."""

    directory: Path

    @property
    def series_file(self) -> Path:
        return self.directory / "series"

    def names(self) -> list[str]:
        if not self.series_file.exists():
            return []
        names = []
        for raw in self.series_file.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                names.append(line)
        return names

    def patches(self) -> list[Path]:
        files = [self.directory / n for n in self.names()]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            raise LabError(f"{self.series_file} lists missing patches: {', '.join(missing)}")
        return files


@dataclass(frozen=True)
class Part:
    """A part of a series as its cover letter presents it: patches
    @first..@last, which build and pass their tests without the parts
    after them."""

    number: int
    first: int
    last: int


# " - Part 2, patches 5-6: the same for ...", " - Part 3, patch 7, RFC: ..."
# (an RFC part says so after its patches).
_PART_LINE = re.compile(r"^ - Part (\d+), (?:patches (\d+)-(\d+)|patch (\d+))(?:, RFC)?: ",
                        re.M)


def parts(cover_letter: str, count: int) -> list[Part]:
    """The parts the cover letter of a series of @count patches names, in
    order; none when it names none. Named parts must cover patches 1 to
    @count in order, each starting where the one before it ended."""
    found = [Part(int(m.group(1)), int(m.group(2) or m.group(4)),
                  int(m.group(3) or m.group(4)))
             for m in _PART_LINE.finditer(cover_letter)]
    expected_first = 1
    for i, part in enumerate(found, 1):
        if part.number != i or part.first != expected_first or part.last < part.first:
            raise LabError(f"the cover letter's part {part.number} (patches {part.first}-"
                           f"{part.last}) does not follow on from the part before it: "
                           f"part {i} must start at patch {expected_first}")
        expected_first = part.last + 1
    if found and expected_first != count + 1:
        raise LabError(f"the cover letter's parts end at patch {expected_first - 1}, "
                       f"the series has {count}")
    return found


@dataclass(frozen=True)
class AmFailure:
    """Where `git am` stopped: the patch, the file, the hunk."""

    patch: str
    file: str | None
    line: int | None
    hunk: str | None

    def describe(self) -> str:
        where = f"patch {self.patch}"
        if self.file:
            where += f", file {self.file}"
        if self.hunk:
            where += f", hunk {self.hunk}"
        elif self.line:
            where += f", near line {self.line}"
        return where


_FAILED_AT = re.compile(r"^error: patch failed: (?P<file>\S+?):(?P<line>\d+)$", re.M)
_NOT_APPLY = re.compile(r"^error: (?P<file>\S+): (?:patch does not apply|"
                        r"does not exist in index|already exists in index)", re.M)


def hunk_header(patch_text: str, file: str, line: int) -> str | None:
    """The `@@ -line,...` header of `file`'s hunk that starts at `line`."""
    in_file = False
    best: str | None = None
    for raw in patch_text.splitlines():
        if raw.startswith("diff --git "):
            in_file = raw.endswith(f" b/{file}")
        elif in_file and raw.startswith("@@ "):
            m = re.match(r"@@ -(\d+)", raw)
            if m and int(m.group(1)) == line:
                return raw
            if m and best is None and int(m.group(1)) >= line:
                best = raw
    return best


def parse_am_failure(patch: Path, output: str) -> AmFailure:
    """Turn `git am`'s complaint into the patch, file and hunk that failed."""
    text = patch.read_text(errors="replace") if patch.exists() else ""
    m = _FAILED_AT.search(output)
    if m:
        file, line = m.group("file"), int(m.group("line"))
        return AmFailure(patch.name, file, line, hunk_header(text, file, line))
    m = _NOT_APPLY.search(output)
    if m:
        return AmFailure(patch.name, m.group("file"), None, None)
    return AmFailure(patch.name, None, None, None)


def patch_subject(patch: Path) -> str:
    """The subject of a format-patch file, unfolded, without "[PATCH ...]"."""
    subject: list[str] = []
    for raw in patch.read_text(errors="replace").splitlines():
        if subject and raw[:1] in (" ", "\t"):
            subject.append(raw.strip())
        elif subject or not raw:
            break
        elif raw.startswith("Subject:"):
            subject.append(raw[len("Subject:"):].strip())
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(subject))


_FAILED_PATCH = re.compile(r"^Patch failed at \d+ (?P<subject>.*)$", re.M)


def parse_am_run_failure(patches: list[Path], output: str) -> AmFailure:
    """Where a `git am` over several patch files stopped: git names the
    patch by its subject; find its file, then the file and hunk."""
    m = _FAILED_PATCH.search(output)
    if m:
        for patch in patches:
            if patch_subject(patch) == m.group("subject").strip():
                return parse_am_failure(patch, output)
        return AmFailure(m.group("subject").strip(), None, None, None)
    return AmFailure("(unknown: git am named no patch)", None, None, None)


def write_series(directory: Path, names: list[str], header: str) -> None:
    lines = [f"# {header}"] + names
    (directory / "series").write_text("\n".join(lines) + "\n")


_SHORTLOG_HEAD = re.compile(r"^memlab \(\d+\):$", re.M)


def refresh_cover_letter(text: str, subjects: list[str], diffstat: str) -> str:
    """The cover letter with its generated parts brought up to date: the
    patch count in the subject, the shortlog and the diffstat (everything
    from "memlab (N):" to the signature). The prose is kept as written."""
    n = len(subjects)
    text = re.sub(r"^(Subject: \[PATCH )0/\d+\]", rf"\g<1>0/{n}]", text, count=1, flags=re.M)
    generated = (f"memlab ({n}):\n" + "".join(f"  {s}\n" for s in subjects)
                 + "\n" + diffstat.rstrip("\n") + "\n")
    m = _SHORTLOG_HEAD.search(text)
    sig = text.rfind("\n-- \n")
    if m and sig > m.start():
        return text[:m.start()] + generated + text[sig:]
    head = text[:sig] if sig >= 0 else text.rstrip("\n") + "\n"
    return head.rstrip("\n") + "\n\n" + generated + (text[sig:] if sig >= 0 else "")
