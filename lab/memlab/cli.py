"""memlab's command line: runs the verb commands.py parsed, one function
each, with errors and without tracebacks; after a verb that recorded
results or wrote patches, the documents that cite them are written again
(documents.refresh())."""
from __future__ import annotations

import argparse
import errno
import sys
import time
from pathlib import Path
from typing import Callable

from . import (accel, bench, build, catalog, ci, commands, console, debian_image, demo, documents,
               guest, kernel_tree, kunit_runner, matrix, native, package, testcmd)
from .runner import LabError, say, stderr


def _source(args: argparse.Namespace) -> int:
    kernel_tree.source(force=args.force)
    return 0


def _export(args: argparse.Namespace) -> int:
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
    guest.build_kernel(args.variant, args.config, args.arch)
    return 0


# `boot` options that shape the machine of a plain script; a scenario's
# machine is its own.
_MACHINE_OPTIONS = ("memory", "pmem", "cpus")


def _boot(args: argparse.Namespace) -> int:
    sc = catalog.SCENARIOS.get(args.script)
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
        accel.default_accel(guest.built_image(spec))
    result = guest.boot_and_run(spec)
    problems = sc.verdict(result) if sc is not None else result.problems()
    print(result.summary() if sc is None else
          f"scenario {sc.name} on {args.variant} {args.config} ({result.accel}): "
          + ("ok" if not problems else "FAILED: " + "; ".join(problems))
          + f" [{result.seconds:.0f}s, log {result.log}]")
    return 0 if not problems else 1


def _check(args: argparse.Namespace) -> int:
    sc = catalog.get(args.scenario)
    log = Path(args.log)
    try:
        text = log.read_text(errors="replace")
    except OSError as e:
        raise LabError(f"cannot read {log}: {e.strerror}") from None
    con = console.parse(text)
    runs_here = args.config in sc.runs_on() or not sc.runs_on()
    problems = sc.judge_console(con, args.config) if runs_here else \
        [f"{sc.name} does not run on {args.config} (it runs on {', '.join(sc.runs_on())})"]
    print(f"scenario {sc.name} ({args.config}), {log}: "
          + ("ok" if not problems else "FAILED: " + "; ".join(problems)))
    return 0 if not problems else 1


def _kunit(args: argparse.Namespace) -> int:
    config = args.config or kunit_runner.default_config(args.arch)
    build.build("patched", config, args.arch)   # the kernel that carries the suites
    res = kunit_runner.run(config, args.arch)
    print(res.summary())
    return 0 if res.ok else 1


def _test(args: argparse.Namespace) -> int:
    if args.list:
        testcmd.print_plan(quick=args.quick, full=args.full, skip=set(args.skip or []))
        return 0
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
        return native.run(device_gb=args.device_gb)
    return bench.run(mode=args.mode, quick=args.quick, rounds=args.rounds,
                     only=args.scenario, pmem_gb=args.pmem)


def _matrix(args: argparse.Namespace) -> int:
    if args.prefixes:
        prefixes = matrix.run_prefixes()
        bad = [p.patch for p in prefixes if not p.ok]
        tail = " (and the clearing tail alone)" if matrix.built_tail(prefixes) else ""
        say(f"matrix --prefixes: {len(prefixes) - len(bad)} of {len(prefixes)} prefixes"
            f"{tail} build without a new diagnostic"
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
    return ci.run()


def _report(args: argparse.Namespace) -> int:
    return documents.run(check=args.check)


def _demo(args: argparse.Namespace) -> int:
    return demo.run(icount=not args.wall, pmem_gb=args.pmem)


# Each verb's function, and whether it records results or writes patches,
# after which the documents that cite them are written again.
VERBS: dict[str, tuple[Callable[[argparse.Namespace], int], bool]] = {
    "source": (_source, False), "export": (_export, True), "build": (_build, False),
    "boot": (_boot, False), "check": (_check, False), "kunit": (_kunit, False),
    "test": (_test, True), "bench": (_bench, True), "matrix": (_matrix, True),
    "package": (_package, True), "image": (_image, True), "ci": (_ci, True),
    "report": (_report, False), "demo": (_demo, False),
}


def main(argv: list[str]) -> int:
    args = commands.parser().parse_args(argv)
    start = time.monotonic()
    run, records = VERBS[args.verb]
    try:
        rc = int(run(args))
        if records and not getattr(args, "check", False) and not getattr(args, "list", False):
            documents.refresh()
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
