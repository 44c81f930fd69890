"""memlab's command line: one sub-command per verb, errors without tracebacks."""
from __future__ import annotations

import argparse
import errno
import sys
import time

from . import arches, debian_image, guest, kernel_base, package, scenarios, testcmd
from .runner import LabError, say, stderr


def _source(args: argparse.Namespace) -> int:
    from . import kernel_tree
    kernel_tree.source(force=args.force)
    return 0


def _export(args: argparse.Namespace) -> int:
    from . import kernel_tree
    if args.check:
        diffs = kernel_tree.check_export()
        if diffs:
            stderr("patches/ and build/linux differ:\n  " + "\n  ".join(diffs))
            return 1
        say("patches/ matches build/linux")
        return 0
    kernel_tree.export()
    return 0


def _build(args: argparse.Namespace) -> int:
    from . import build
    build.build(args.variant, args.config, args.arch)
    return 0


# `boot` options that shape the machine of a plain script; a scenario's
# machine is its own.
_MACHINE_OPTIONS = ("memory", "pmem", "cpus")


def _boot(args: argparse.Namespace) -> int:
    from . import hostinfo
    sc = scenarios.SCENARIOS.get(args.script)
    if sc is not None:
        given = [f"--{o}" for o in _MACHINE_OPTIONS if getattr(args, o) is not None]
        if given:
            raise LabError(f"scenario {sc.name} boots its own machine: leave out "
                           f"{', '.join(given)} (for a guest script only)")
        spec = sc.spec(args.variant, args.config)
        spec.append += args.append or []
        if args.timeout is not None:
            spec.timeout = args.timeout
    else:
        spec = guest.GuestSpec(variant=args.variant, config=args.config, script=args.script,
                               memory_gb=args.memory or 2, pmem_gb=args.pmem or 0,
                               cpus=args.cpus or 2, timeout=args.timeout or 900,
                               append=args.append or [], arch=args.arch)
    spec.accel = args.accel if args.accel != "auto" else \
        hostinfo.default_accel(guest.built_image(spec))
    result = guest.boot_and_run(spec)
    problems = sc.verdict(result) if sc is not None else result.problems()
    print(result.summary() if sc is None else
          f"scenario {sc.name} on {args.variant} {args.config} ({result.accel}): "
          + ("ok" if not problems else "FAILED: " + "; ".join(problems))
          + f" [{result.seconds:.0f}s, log {result.log}]")
    return 0 if not problems else 1


def _kunit(args: argparse.Namespace) -> int:
    from . import build, kunit_runner
    config = args.config or kunit_runner.default_config(args.arch)
    build.build("patched", config, args.arch)   # the kernel that carries the suites
    res = kunit_runner.run(config, args.arch)
    print(res.summary())
    return 0 if res.ok else 1


def _test(args: argparse.Namespace) -> int:
    return testcmd.run(quick=args.quick, full=args.full, skip=set(args.skip or []))


# The options of the guest bench, which `bench native` does not take.
_GUEST_BENCH_OPTIONS = ("mode", "quick", "rounds", "scenario", "pmem")


def _bench(args: argparse.Namespace) -> int:
    if args.what == "native":
        given = [f"--{o}" for o in _GUEST_BENCH_OPTIONS
                 if getattr(args, o) is not None and getattr(args, o) is not False]
        if given:
            raise LabError(f"`bench native` measures on the host: {', '.join(given)} "
                           "belong to the guest bench (`memlab bench` without `native`)")
        from . import native
        return native.run(device_gb=args.device_gb)
    from . import bench
    return bench.run(mode=args.mode, quick=args.quick, rounds=args.rounds,
                     only=args.scenario, pmem_gb=args.pmem)


def _matrix(args: argparse.Namespace) -> int:
    from . import matrix
    if args.prefixes:
        prefixes = matrix.run_prefixes()
        bad = [p.patch for p in prefixes if not p.ok]
        say(f"matrix --prefixes: {len(prefixes) - len(bad)} of {len(prefixes)} prefixes "
            "(and the clearing tail alone) build without a new diagnostic"
            + (f"; not: {', '.join(bad)}" if bad else ""))
        return 1 if bad else 0
    results = matrix.run(args.target)
    failed = [r.target for r in results if not r.ok]
    say(f"matrix: {len(results) - len(failed)} of {len(results)} targets ok"
        + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _package(args: argparse.Namespace) -> int:
    built = package.build_packages(args.flavour)
    print(f"{built.release} {built.version}:\n" + "\n".join(f"  {d}" for d in built.debs))
    return 0


def _image(args: argparse.Namespace) -> int:
    boots = debian_image.run(args.flavour)
    for b in boots:
        print(f"{b.release}: " + ("ok" if b.ok else "FAILED: " + "; ".join(b.problems))
              + f" [{b.seconds:.0f}s, log {b.log}]")
    return 0 if all(b.ok for b in boots) else 1


def _ci(args: argparse.Namespace) -> int:
    from . import ci
    return ci.run()


def _report(args: argparse.Namespace) -> int:
    from . import documents
    return documents.run(check=args.check)


def _demo(args: argparse.Namespace) -> int:
    from . import demo
    return demo.run(icount=not args.wall, pmem_gb=args.pmem)


def _matrix_targets() -> list[str]:
    from . import matrix
    return list(matrix.TARGETS)


def parser() -> argparse.ArgumentParser:
    base = kernel_base.current()
    p = argparse.ArgumentParser(
        prog="memlab", description="Build, boot, test and measure the "
        f"memmap-init series on Debian's Linux {base.name}.")
    sub = p.add_subparsers(dest="verb", required=True)

    s = sub.add_parser("source", help=f"fetch {base.package} (the pinned upload), make build/linux, "
                       "apply the series")
    s.add_argument("--force", action="store_true",
                   help="discard build/linux work not exported to patches/")
    s.set_defaults(func=_source)

    s = sub.add_parser("export", help="write build/linux's commits back to patches/")
    s.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when patches/ and build/linux differ")
    s.set_defaults(func=_export)

    def kernel_args(s: argparse.ArgumentParser, archs: list[str]) -> None:
        s.add_argument("--variant", choices=["base", "patched"], default="patched",
                       help="base: the pristine tree; patched: with the series (default); "
                       "both with the lab patches")
        s.add_argument("--config", default="lab",
                       help="fragment set (configs/NAME.config): lab, defer (deferred struct "
                       "page init), vm (defer with DEBUG_VM), debug (KASAN), debian (Debian's "
                       "own config), kunit (arm64, sparc64), highmem (i386)")
        s.add_argument("--arch", default=arches.GUEST_ARCH, choices=archs,
                       help=f"target architecture (default {arches.GUEST_ARCH})")

    s = sub.add_parser("build", help="out-of-tree kernel build (tinyconfig or Debian's "
                       "config, + fragments)")
    kernel_args(s, list(arches.ARCHES))
    s.set_defaults(func=_build)

    s = sub.add_parser("boot", help="boot a built kernel under QEMU and run a guest script")
    kernel_args(s, [arches.GUEST_ARCH])
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
    s.set_defaults(func=_boot)

    s = sub.add_parser("kunit", help="run our KUnit suites: built into a patched kernel "
                       "(the lab kernel on x86-64), run by one bare QEMU boot")
    s.add_argument("--config",
                   help="the patched kernel to build and boot (default: the arch's first "
                   "test config: lab on x86-64, kunit on arm64); on x86-64 also defer "
                   "(deferred struct page init), vm (DEBUG_VM, template path on), "
                   "debug (KASAN) or debian (Debian's own config)")
    s.add_argument("--arch", default=arches.GUEST_ARCH,
                   choices=[a.name for a in arches.ARCHES.values() if a.bootable])
    s.set_defaults(func=_kunit)

    s = sub.add_parser("test", help="the project's tests: pytest, mypy, build, KUnit, "
                       "guest scenarios")
    s.add_argument("--quick", action="store_true",
                   help="pytest, mypy, the apply check and checkpatch only")
    s.add_argument("--full", action="store_true",
                   help="also the checking kernels (" + ", ".join(sorted(testcmd.FULL_ONLY))
                   + "): their builds, KUnit runs and guests")
    s.add_argument("--skip", action="append", choices=testcmd.skip_choices(),
                   help="leave out a step (repeatable): a kind of step; or one kernel, by "
                   f"its config ({arches.GUEST_ARCH}) or its arch (the others); 'apply': "
                   "the README's apply command on the pristine tree")
    s.set_defaults(func=_test)

    s = sub.add_parser("bench", help="base vs patched on every scenario, same run; "
                       "table in results/latest.md, samples in results/latest.json")
    s.add_argument("--mode", choices=list(guest.MODES),
                   help="icount: deterministic emulated instruction time (default "
                   "without KVM); wall: TCG wall clock; kvm: real time")
    s.add_argument("--quick", action="store_true", help="small sizes, few rebinds (smoke test)")
    s.add_argument("--rounds", type=int, help="alternating base/patched rounds "
                   "(default 2 for icount, 5 otherwise)")
    s.add_argument("--scenario", action="append", choices=list(scenarios.bench_rows()),
                   help="only this row (repeatable); results then go to "
                   "results/MODE-SCENARIO+.../")
    s.add_argument("--pmem", type=int, help="pmem region in GB (default: largest that fits, <= 16)")
    s.set_defaults(func=_bench, what=None)
    what = s.add_subparsers(dest="what", metavar="[native]")
    n = what.add_parser("native", help="the store patterns on this CPU, outside the guest")
    n.add_argument("--device-gb", type=float, default=100.0,
                   help="device size whose memmap is initialized (default 100)")

    s = sub.add_parser("matrix", help="the series' objects built with W=1 for every "
                       "target of the compile matrix, pristine vs series: no new error "
                       "or warning")
    s.add_argument("--target", action="append", choices=list(_matrix_targets()),
                   help="only this target (repeatable)")
    s.add_argument("--prefixes", action="store_true",
                   help="instead: every prefix of the series, and its clearing tail alone on "
                   "the pristine tree, for x86-64 with and without ZONE_DEVICE and arm64 "
                   "(the series' objects only)")
    s.set_defaults(func=_matrix)

    s = sub.add_parser("package", help="Debian packages (linux-image, linux-headers) of "
                       "the patched kernel, from Debian's source and configuration with its "
                       "modules (make bindeb-pkg), in build/package/FLAVOUR/")
    s.add_argument("--flavour", choices=list(package.FLAVOURS), default=package.DEFAULT_FLAVOUR,
                   help=f"Debian's kernel flavour (default {package.DEFAULT_FLAVOUR}; amd64: "
                   "the full module set, several hours on 2 cores)")
    s.set_defaults(func=_package)

    s = sub.add_parser("image", help="a Debian system made from Debian's packages with "
                       "Debian's kernel and the package beside it, booted under QEMU on each "
                       "with a pmem region: the operator's test (results/debian-image.json)")
    s.add_argument("--flavour", choices=list(package.FLAVOURS), default=package.DEFAULT_FLAVOUR,
                   help="the flavour whose package `memlab package` built")
    s.set_defaults(func=_image)

    s = sub.add_parser("ci", help="what .ci/run runs: test, then bench --quick, each "
                       "step's time recorded in results/ci/ (cold.json when ccache was empty)")
    s.set_defaults(func=_ci)

    s = sub.add_parser("report", help="write README.md, docs/ and the cover letter from "
                       "their templates (lab/documents/) and results/")
    s.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when a document differs from its template "
                   "and results/")
    s.set_defaults(func=_report)

    s = sub.add_parser("demo", help="build and boot base and patched, print memmap init lines")
    s.add_argument("--wall", action="store_true", help="wall-clock TCG instead of -icount")
    s.add_argument("--pmem", type=int, default=4, help="pmem region in GB")
    s.set_defaults(func=_demo)
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    start = time.monotonic()
    try:
        rc = int(args.func(args))
    except LabError as e:
        stderr(f"memlab {args.verb}: error: {e}")
        return 1
    except KeyboardInterrupt:
        stderr("interrupted")
        return 130
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        stderr(f"memlab {args.verb}: error: no space left on the device that holds "
               f"{e.filename or 'a file it was writing'}: free some space and run it again")
        return 1
    say(f"{args.verb} finished in {time.monotonic() - start:.0f}s (exit {rc})")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
