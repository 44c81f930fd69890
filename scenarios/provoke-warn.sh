# Guest scenario: make the kernel WARN (LKDTM) and exit 0 anyway. The runner
# must fail this run from the console alone; `memlab test` uses it for that.
set -eu
. "$(dirname "$0")/lib.sh"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
settle
say done=1
