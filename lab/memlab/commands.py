"""The command line's grammar: every verb, its options and their choices,
taken from the lab's registries (architectures, configs, scenarios, bench
rows, matrix targets, flavours, the test plan's kinds of step). cli.py runs
what it parses; the documents render its help (docs/lab.md)."""
from __future__ import annotations

import argparse

from . import arches, catalog, guest, kconfig, kernel_base, matrix, package, testcmd


def _kernel_args(s: argparse.ArgumentParser, archs: list[str]) -> None:
    s.add_argument("--variant", choices=["base", "patched"], default="patched",
                   help="base: the pristine tree; patched: with the series (default); "
                   "both with the stable fixes and the lab patches")
    s.add_argument("--config", default="lab", choices=kconfig.configs(),
                   help="fragment set (configs/NAME.config): lab, defer (deferred struct "
                   "page init), vm (defer with DEBUG_VM), debug (KASAN), debian (Debian's "
                   "own config), kunit (arm64, sparc64), highmem (i386)")
    s.add_argument("--arch", default=arches.GUEST_ARCH, choices=archs,
                   help=f"target architecture (default {arches.GUEST_ARCH})")


def parser() -> argparse.ArgumentParser:
    base = kernel_base.current()
    p = argparse.ArgumentParser(
        prog="memlab", description="Build, boot, test and measure the "
        f"memmap-init series on Debian's Linux {base.name}.")
    sub = p.add_subparsers(dest="verb", required=True)

    s = sub.add_parser("source", help=f"fetch {base.package} (the pinned upload), make "
                       "build/linux, apply the series")
    s.add_argument("--force", action="store_true",
                   help="discard build/linux work not exported to patches/")

    s = sub.add_parser("export", help="write build/linux's commits back to patches/")
    s.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when patches/ and build/linux differ")

    s = sub.add_parser("build", help="out-of-tree kernel build (tinyconfig or Debian's "
                       "config, + fragments)")
    _kernel_args(s, list(arches.ARCHES))

    s = sub.add_parser("boot", help="boot a built kernel under QEMU and run a guest script")
    _kernel_args(s, [arches.GUEST_ARCH])
    s.add_argument("--script", required=True,
                   help="a scenario (its machine, script and checks: see docs/testing.md), "
                   "or the name (scenarios/NAME.sh) or path of a guest shell script")
    s.add_argument("--memory", type=int, help="a script's guest RAM in GB besides pmem "
                   "(default 2)")
    s.add_argument("--pmem", type=int, help="a script's legacy pmem region size in GB "
                   "(memmap=; default 0)")
    s.add_argument("--accel", choices=["auto", *guest.ACCELS], default="auto",
                   help="auto: KVM where a probe boot works, else TCG; tcg-icount: "
                   "deterministic instruction-count time (-icount shift=0, 1 vCPU)")
    s.add_argument("--cpus", type=int, help="a script's guest vCPUs (default 2; tcg-icount: "
                   "one)")
    s.add_argument("--timeout", type=int, help="seconds (default: a scenario's own, 900 "
                   "for a script)")
    s.add_argument("--append", action="append", help="extra kernel command line")

    s = sub.add_parser("check", help="a scenario's verdict on a console log it left "
                       "(build/logs/guest/), without booting: as `memlab test` judged it")
    s.add_argument("scenario", choices=list(catalog.SCENARIOS), metavar="SCENARIO",
                   help="the scenario whose checks to apply")
    s.add_argument("log", help="the guest's console log")
    s.add_argument("--config", default="lab", choices=kconfig.configs(),
                   help="the config its kernel was built with (what the scenario's "
                   "environment and checks depend on; default lab)")

    s = sub.add_parser("kunit", help="run our KUnit suites: built into a patched kernel "
                       "(the lab kernel on x86-64), run by one bare QEMU boot")
    s.add_argument("--config", choices=kconfig.configs(),
                   help="the patched kernel to build and boot (default: the arch's first "
                   "test config: lab on x86-64, kunit on arm64); on x86-64 also defer "
                   "(deferred struct page init), vm (DEBUG_VM, template path on), "
                   "debug (KASAN) or debian (Debian's own config)")
    s.add_argument("--arch", default=arches.GUEST_ARCH,
                   choices=[a.name for a in arches.ARCHES.values() if a.bootable])

    s = sub.add_parser("test", help="the project's tests: pytest, mypy, build, KUnit, "
                       "guest scenarios")
    s.add_argument("--quick", action="store_true",
                   help="pytest, mypy, Debian's uploads, the apply check and checkpatch only")
    s.add_argument("--full", action="store_true",
                   help="also " + ", ".join(sorted(testcmd.FULL_ONLY)) + ": the measured "
                   "and the checking kernels' builds, KUnit runs and guests, the prefixes of "
                   "the series, the compile matrix, the packages and the Debian image")
    s.add_argument("--skip", action="append", choices=testcmd.skip_choices(),
                   help="leave out a step (repeatable): a kind of step; or one kernel, by "
                   f"its config ({arches.GUEST_ARCH}) or its arch (the others); 'apply': "
                   "the README's apply command on the pristine tree")
    s.add_argument("--list", action="store_true",
                   help="print the steps the other options select, what each needs and "
                   "its last recorded time, and run nothing")

    s = sub.add_parser("bench", help="base vs patched on every scenario, same run; "
                       "table in results/latest.md, samples in results/latest.json")
    s.add_argument("--mode", choices=list(guest.MODES),
                   help="icount: deterministic emulated instruction time (default "
                   "without KVM); wall: TCG wall clock; kvm: real time")
    s.add_argument("--quick", action="store_true", help="small sizes, few rebinds (smoke test)")
    s.add_argument("--rounds", type=int, help="alternating base/patched rounds "
                   "(default 2 for icount, 5 otherwise)")
    s.add_argument("--scenario", action="append", choices=list(catalog.bench_rows()),
                   help="only this row (repeatable); results then go to "
                   "results/MODE-ROWS/, ROWS the rows in table order")
    s.add_argument("--pmem", type=int, help="pmem region in GB (default: largest that fits, <= 16)")
    s.set_defaults(what=None)
    what = s.add_subparsers(dest="what", metavar="[native]")
    n = what.add_parser("native", help="the store patterns on this CPU, outside the guest")
    n.add_argument("--device-gb", type=float, default=100.0,
                   help="device size whose memmap is initialized (default 100)")

    s = sub.add_parser("matrix", help="the series' objects built with W=1 for every "
                       "target of the compile matrix, pristine vs series: no new error "
                       "or warning")
    s.add_argument("--target", action="append", choices=list(matrix.TARGETS),
                   help="only this target (repeatable)")
    s.add_argument("--prefixes", action="store_true",
                   help="instead: every prefix of the series, and its clearing tail alone on "
                   "the pristine tree, for x86-64 with and without ZONE_DEVICE and arm64 "
                   "(the series' objects only)")

    s = sub.add_parser("package", help="Debian packages (linux-image, linux-headers) of "
                       "the patched kernel, from Debian's source and configuration with its "
                       "modules (make bindeb-pkg), in build/package/FLAVOUR/")
    s.add_argument("--flavour", choices=list(package.FLAVOURS), default=package.DEFAULT_FLAVOUR,
                   help=f"Debian's kernel flavour (default {package.DEFAULT_FLAVOUR}; amd64: "
                   "Debian's full module set; docs/operators.md has each flavour's build time)")

    s = sub.add_parser("image", help="a Debian system made from Debian's packages with "
                       "Debian's kernel and the package beside it, booted under QEMU on each "
                       "with a pmem region: the operator's test (results/debian-image.json)")
    s.add_argument("--flavour", choices=list(package.FLAVOURS), default=package.DEFAULT_FLAVOUR,
                   help="the flavour whose package `memlab package` built")

    sub.add_parser("ci", help="what .ci/run runs: the default plan of test, each "
                   "step's time recorded in results/ci/ (cold.json when ccache was empty)")

    s = sub.add_parser("report", help="write README.md, docs/ and the cover letter from "
                       "their templates (lab/documents/) and results/")
    s.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when a document differs from its template "
                   "and results/, or cites a measurement of code that has changed since")

    s = sub.add_parser("demo", help="build and boot base and patched, print memmap init lines")
    s.add_argument("--wall", action="store_true", help="wall-clock TCG instead of -icount")
    s.add_argument("--pmem", type=int, default=4, help="pmem region in GB")
    return p
