"""Debian's archive through an apt state of the lab's own (build/apt/):
its own sources list, package lists, cache and an empty dpkg status, so
that the lab reaches any Debian suite (trixie-security, sid) without
touching the machine's apt configuration or installing what it fetches.
Packages are downloaded and unpacked under build/debian/, never
installed."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .runner import LabError, run_logged, run_quiet

KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
# Package lists older than this are fetched again before a question about
# what the archive serves.
MAX_LIST_AGE = 3600.0

# Debian's releases by codename, as people name them.
RELEASES = {"bookworm": "Debian 12 bookworm", "trixie": "Debian 13 trixie",
            "forky": "Debian 14 forky", "sid": "Debian unstable sid"}

STATE = paths.BUILD / "apt"
LOG = paths.LOGS / "archive.log"
DOWNLOADS = paths.BUILD / "debian" / "debs"
UNPACKED = paths.BUILD / "debian" / "root"


def mirror(suite: str) -> str:
    return SECURITY_MIRROR if suite.endswith("-security") else MIRROR


def sources_list(suites: tuple[str, ...]) -> str:
    lines = []
    for suite in suites:
        for kind in ("deb", "deb-src"):
            lines.append(f"{kind} [signed-by={KEYRING}] {mirror(suite)} {suite} main")
    return "\n".join(lines) + "\n"


def apt_conf() -> str:
    """The whole apt configuration: nothing of /etc/apt is read (its
    Dir::Etc is ours), the package lists, cache and dpkg status are ours."""
    return "\n".join([
        f'Dir::Etc "{STATE / "etc"}";',
        'Dir::Etc::sourcelist "sources.list";',
        'Dir::Etc::sourceparts "sources.list.d";',
        'Dir::Etc::parts "apt.conf.d";',
        'Dir::Etc::preferencesparts "preferences.d";',
        f'Dir::State "{STATE / "state"}";',
        f'Dir::State::status "{STATE / "status"}";',
        f'Dir::Cache "{STATE / "cache"}";',
        'Acquire::Languages "none";',
        # The mirror may serve a suite whose Release file has passed its
        # Valid-Until date (sid's, seen here): its signature is still
        # checked, only the date is not.
        'Acquire::Check-Valid-Until "false";',
        # Downloads land in build/, which apt's own unprivileged user may
        # not be able to write.
        'APT::Sandbox::User "root";',
    ]) + "\n"


@dataclass(frozen=True)
class Archive:
    """The suites the lab's apt state serves from."""

    suites: tuple[str, ...]

    def _prepare(self) -> dict[str, str]:
        etc = STATE / "etc"
        for d in (etc / "sources.list.d", etc / "apt.conf.d", etc / "preferences.d",
                  STATE / "state" / "lists" / "partial",
                  STATE / "cache" / "archives" / "partial"):
            d.mkdir(parents=True, exist_ok=True)
        (STATE / "status").touch()
        (STATE / "apt.conf").write_text(apt_conf())
        wanted = sources_list(self.suites)
        listing = etc / "sources.list"
        if not listing.exists() or listing.read_text() != wanted:
            listing.write_text(wanted)
            self._stamp.unlink(missing_ok=True)   # other suites: fetch again
        return {"APT_CONFIG": str(STATE / "apt.conf"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                "LC_ALL": "C"}

    @property
    def _stamp(self) -> Path:
        return STATE / "updated"

    def update(self, max_age: float = MAX_LIST_AGE) -> dict[str, str]:
        """Fetch the package lists unless fetched within @max_age seconds;
        the environment that runs apt with this state."""
        if not KEYRING.exists():
            raise LabError(f"{KEYRING} is missing: install the Debian package "
                           "debian-archive-keyring")
        env = self._prepare()
        if not self._stamp.exists() or time.time() - self._stamp.stat().st_mtime > max_age:
            run_logged(["apt-get", "update", "-q"], LOG,
                       f"apt-get update ({', '.join(self.suites)}, the lab's own apt state)",
                       env=env)
            self._stamp.touch()
        return env

    def served(self, package: str) -> list[str]:
        """The versions of binary @package the suites serve, newest first."""
        env = self.update()
        res = run_quiet(["apt-cache", "madison", package], env=env, check=False)
        versions = set()
        for line in res.stdout.splitlines():
            fields = [f.strip() for f in line.split("|")]
            if len(fields) == 3 and fields[0] == package and fields[2].endswith("Packages"):
                versions.add(fields[1])
        return sorted(versions, key=functools.cmp_to_key(compare_versions), reverse=True)

    def newest(self, package: str) -> str:
        versions = self.served(package)
        if not versions:
            raise LabError(f"no suite of {', '.join(self.suites)} serves {package}")
        return versions[0]

    def depends(self, package: str, version: str) -> list[str]:
        """The packages @package at @version depends on, by name."""
        env = self.update()
        res = run_quiet(["apt-cache", "show", f"{package}={version}"], env=env, check=False)
        for line in res.stdout.splitlines():
            if line.startswith("Depends:"):
                return [alt.split()[0] for dep in line[len("Depends:"):].split(",")
                        for alt in [dep.strip().split("|")[0].strip()] if alt]
        raise LabError(f"{package} {version} is not served by {', '.join(self.suites)}")

    def unpacked(self, package: str, version: str) -> Path:
        """@package at @version downloaded and unpacked (dpkg-deb -x, not
        installed): the directory that stands for its root file system."""
        root = UNPACKED / f"{package}_{version}"
        done = root / ".memlab-unpacked"
        if done.exists():
            return root
        deb = self.download(package, version)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        run_logged(["dpkg-deb", "-x", str(deb), str(root)], LOG, f"unpack {deb.name}")
        done.touch()
        return root

    def download(self, package: str, version: str) -> Path:
        """The .deb of @package at @version, fetched into build/debian/debs."""
        DOWNLOADS.mkdir(parents=True, exist_ok=True)
        have = self._deb(package, version)
        if have:
            return have
        env = self.update()
        if version not in self.served(package):
            env = self.update(max_age=0)
            served = self.served(package)
            if version not in served:
                raise LabError(f"{package} {version} is not served by "
                               f"{', '.join(self.suites)} (served: "
                               f"{', '.join(served[:5]) or 'none'})")
        run_logged(["apt-get", "download", "-q", f"{package}={version}"], LOG,
                   f"download {package} {version}", cwd=DOWNLOADS, env=env)
        have = self._deb(package, version)
        if not have:
            raise LabError(f"apt-get download left no .deb of {package} {version} in "
                           f"{DOWNLOADS}")
        return have

    def _deb(self, package: str, version: str) -> Path | None:
        # apt names the file with the version's epoch colon escaped.
        quoted = version.replace(":", "%3a")
        found = sorted(DOWNLOADS.glob(f"{package}_{quoted}_*.deb"))
        return found[0] if found else None


_VERSION = re.compile(r"^[0-9A-Za-z.+~:-]+$")


def compare_versions(a: str, b: str) -> int:
    """Debian's version order (dpkg --compare-versions): -1, 0 or 1."""
    for v in (a, b):
        if not _VERSION.match(v):
            raise LabError(f"not a Debian version: {v!r}")
    if a == b:
        return 0
    res = subprocess.run(["dpkg", "--compare-versions", a, "lt", b], check=False)
    return -1 if res.returncode == 0 else 1
