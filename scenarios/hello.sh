# Guest scenario: boot and report the kernel version (a probe of the runner).
set -eu
. "$(dirname "$0")/lib.sh"
say kernel="$(uname -r)" done=1
