"""scripts/checkpatch.pl --strict over the product series, the stable fixes and the
lab patches."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import deps, kernel_tree, paths
from .runner import run_quiet

# Findings that say nothing about the code: the project signs as itself;
# Debian's source has no git history, in which a Fixes: tag's commit id
# could be looked up.
IGNORED = ["BAD_SIGN_OFF", "NO_AUTHOR_SIGN_OFF", "FROM_SIGN_OFF_MISMATCH",
           "UNKNOWN_COMMIT_ID"]
_TOTAL = re.compile(r"total: (\d+) errors, (\d+) warnings, (?:(\d+) checks, )?")
_FINDING = re.compile(r"^(ERROR|WARNING|CHECK):")
# page-flags.h generates the page flag and type accessors (__SetPageOffline,
# PageReserved, ...) by macro, so checkpatch never sees them defined and
# calls every use CamelCase; any other CamelCase still counts.
_PAGE_FLAG_CAMELCASE = re.compile(r"^CHECK: Avoid CamelCase: <(?:__)?(?:Set|Clear)?Page[A-Z]\w*>$")
# checkpatch asks this of every patch that adds, moves or deletes a file.
# The answer is no for a patch that only adds files an entry of MAINTAINERS
# other than the catch-all already covers (maintained()).
MAINTAINERS_QUESTION = ("WARNING: added, moved or deleted file(s), "
                        "does MAINTAINERS need updating?")
_CREATED = re.compile(r"^ create mode \d+ (\S+)$", re.M)
_MOVED_OR_DELETED = re.compile(r"^ (?:rename|delete mode) ", re.M)
_ENTRY_FIELD = re.compile(r"^[A-Z]:\t")
CATCH_ALL_ENTRY = "THE REST"


@dataclass
class Report:
    patch: Path
    errors: int
    warnings: int
    checks: int
    findings: list[str]

    @property
    def clean(self) -> bool:
        return self.errors == self.warnings == self.checks == 0

    def describe(self) -> str:
        head = (f"{self.patch.name}: {self.errors} errors, {self.warnings} warnings, "
                f"{self.checks} checks")
        return head + "".join(f"\n    {f}" for f in self.findings[:10])


def parse(patch: Path, output: str, maintained: bool = False) -> Report:
    """checkpatch's verdict on @patch; @maintained: MAINTAINERS already
    covers every file it adds (maintained())."""
    m = _TOTAL.search(output)
    errors, warnings, checks = ((int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
                                if m else (1, 0, 0))
    findings = [ln for ln in output.splitlines() if _FINDING.match(ln)]
    excused = [ln for ln in findings if _PAGE_FLAG_CAMELCASE.match(ln)]
    checks -= len(excused)
    if maintained and MAINTAINERS_QUESTION in findings:
        excused.append(MAINTAINERS_QUESTION)
        warnings -= 1
    findings = [ln for ln in findings if ln not in excused]
    if not m:
        findings.append("checkpatch printed no totals")
    return Report(patch, errors, warnings, checks, findings)


def created_files(patch_text: str) -> list[str]:
    """The files a format-patch adds, from its summary; none if it also
    moves or deletes one."""
    if _MOVED_OR_DELETED.search(patch_text):
        return []
    return _CREATED.findall(patch_text)


def entries(output: str) -> list[str]:
    """The MAINTAINERS entries in get_maintainer.pl --sections output."""
    return [ln for ln in output.splitlines() if ln.strip() and not _ENTRY_FIELD.match(ln)]


def maintained(patch: Path) -> bool:
    """Whether @patch only adds files, each covered by a MAINTAINERS entry
    other than the catch-all, in the work tree (the series applied)."""
    created = created_files(patch.read_text())
    for name in created:
        res = run_quiet(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                         "--sections", "-f", name], cwd=paths.KERNEL_TREE, check=False)
        if not [e for e in entries(res.stdout) if e != CATCH_ALL_ENTRY]:
            return False
    return bool(created)


def check(patch: Path) -> Report:
    script = paths.KERNEL_TREE / "scripts" / "checkpatch.pl"
    res = run_quiet(["perl", str(script), "--strict", "--no-color",
                     "--ignore", ",".join(IGNORED), str(patch)],
                    cwd=paths.KERNEL_TREE, env=deps.venv_env(), check=False)
    output = res.stdout + res.stderr
    return parse(patch, output,
                 maintained=MAINTAINERS_QUESTION in output and maintained(patch))


def check_series() -> list[Report]:
    patches = [p for layer in kernel_tree.layers() for p in layer.series.patches()]
    return [check(p) for p in patches]
