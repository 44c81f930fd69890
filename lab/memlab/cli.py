"""memlab's command line: one sub-command per verb, errors without tracebacks."""
from __future__ import annotations

import argparse
import sys
import time

from . import arches
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


def _boot(args: argparse.Namespace) -> int:
    from . import guest
    result = guest.boot_and_run(
        guest.GuestSpec(variant=args.variant, config=args.config,
                        script=args.script, memory_gb=args.memory,
                        pmem_gb=args.pmem, accel="tcg-icount" if args.icount else None,
                        cpus=args.cpus,
                        timeout=args.timeout, append=args.append or []))
    print(result.summary())
    return 0 if result.ok else 1


def _kunit(args: argparse.Namespace) -> int:
    from . import build, kunit_runner
    config = args.config or kunit_runner.default_config(args.arch)
    build.build("patched", config, args.arch)   # the kernel that carries the suites
    res = kunit_runner.run(config, args.arch)
    print(res.summary())
    return 0 if res.ok else 1


def _test(args: argparse.Namespace) -> int:
    from . import testcmd
    return testcmd.run(quick=args.quick, full=args.full, skip=set(args.skip or []))


def _bench(args: argparse.Namespace) -> int:
    if args.what == "native":
        from . import native
        return native.run(device_gb=args.device_gb)
    from . import bench
    return bench.run(mode=args.mode, quick=args.quick, rounds=args.rounds,
                     only=args.scenario, pmem_gb=args.pmem)


def _demo(args: argparse.Namespace) -> int:
    from . import demo
    return demo.run(icount=not args.wall, pmem_gb=args.pmem)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memlab", description="Build, boot, test and measure the "
        "memmap-init series on Debian's Linux 6.12.")
    sub = p.add_subparsers(dest="verb", required=True)

    s = sub.add_parser("source", help="install linux-source-6.12, make build/linux, apply the series")
    s.add_argument("--force", action="store_true",
                   help="discard build/linux work not exported to patches/")
    s.set_defaults(func=_source)

    s = sub.add_parser("export", help="write build/linux's commits back to patches/")
    s.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when patches/ and build/linux differ")
    s.set_defaults(func=_export)

    def kernel_args(s: argparse.ArgumentParser) -> None:
        s.add_argument("--variant", choices=["base", "patched"], default="patched")
        s.add_argument("--config", default="lab",
                       help="fragment set: lab, vm (DEBUG_VM) or debug (KASAN)")
        s.add_argument("--arch", default="x86_64", choices=list(arches.ARCHES))

    s = sub.add_parser("build", help="out-of-tree kernel build (tinyconfig + fragments)")
    kernel_args(s)
    s.set_defaults(func=_build)

    s = sub.add_parser("boot", help="boot a built kernel under QEMU and run a guest script")
    kernel_args(s)
    s.add_argument("--script", required=True, help="scenario name or path of a guest shell script")
    s.add_argument("--memory", type=int, default=2, help="guest RAM in GB besides pmem")
    s.add_argument("--pmem", type=int, default=0, help="legacy pmem region size in GB (memmap=)")
    s.add_argument("--icount", action="store_true",
                   help="deterministic instruction-count time (-icount shift=0, 1 vCPU)")
    s.add_argument("--cpus", type=int, default=2)
    s.add_argument("--timeout", type=int, default=900, help="seconds")
    s.add_argument("--append", action="append", help="extra kernel command line")
    s.set_defaults(func=_boot)

    s = sub.add_parser("kunit", help="run our KUnit suites: built into a patched kernel "
                       "(the lab kernel on x86-64), run by one bare QEMU boot")
    s.add_argument("--config",
                   help="the patched kernel to build and boot: on x86-64 lab (default) "
                   "vm (DEBUG_VM, template path on) or debug (KASAN); on arm64 kunit (default)")
    s.add_argument("--arch", default="x86_64",
                   choices=[a.name for a in arches.ARCHES.values() if a.bootable])
    s.set_defaults(func=_kunit)

    s = sub.add_parser("test", help="the project's tests: pytest, build, KUnit, guest scenarios")
    s.add_argument("--quick", action="store_true", help="pytest, the apply check and checkpatch only")
    s.add_argument("--full", action="store_true",
                   help="also the debug (KASAN) kernel: its build, KUnit run and guests")
    s.add_argument("--skip", action="append",
                   choices=["pytest", "apply", "checkpatch", "build", "kunit", "guest",
                            "lab", "vm", "debug", "highmem", "arm64"],
                   help="leave out a step (repeatable); 'apply': the README's apply "
                   "command on the pristine tree; 'lab', 'vm', 'debug': that x86-64 kernel "
                   "(vm: DEBUG_VM; debug: KASAN) with its KUnit run and guests; 'highmem': the i386 "
                   "compile test, 'arm64': the arm64 KUnit kernel")
    s.set_defaults(func=_test)

    s = sub.add_parser("bench", help="base vs patched on every scenario, same run; "
                       "table in results/latest.md, samples in results/latest.json")
    s.add_argument("what", nargs="?", choices=["native"],
                   help="native: the store patterns on this CPU, outside the guest")
    s.add_argument("--device-gb", type=float, default=100.0,
                   help="native: device size whose memmap is initialized (default 100)")
    s.add_argument("--mode", choices=["icount", "wall", "kvm"],
                   help="icount: deterministic emulated instruction time (default "
                   "without KVM); wall: TCG wall clock; kvm: real time")
    s.add_argument("--quick", action="store_true", help="small sizes, few rebinds (smoke test)")
    s.add_argument("--rounds", type=int, help="alternating base/patched rounds "
                   "(default 2 for icount, 5 otherwise)")
    s.add_argument("--scenario", action="append",
                   help="only this scenario (repeatable; an unknown name lists the "
                   "known ones); results then go to results/MODE-SCENARIO+.../")
    s.add_argument("--pmem", type=int, help="pmem region in GB (default: largest that fits, <= 16)")
    s.set_defaults(func=_bench)

    s = sub.add_parser("demo", help="build and boot base and patched, print memmap init lines")
    s.add_argument("--wall", action="store_true", help="wall-clock TCG instead of --icount")
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
    say(f"{args.verb} finished in {time.monotonic() - start:.0f}s (exit {rc})")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
