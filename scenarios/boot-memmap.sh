# Guest scenario: boot only. The kernel timed its memmap init of all boot
# memory on the console (lab patch 0004); report what memory it manages.
set -eu
. "$(dirname "$0")/lib.sh"
while read -r key kb _; do
	[ "$key" = MemTotal: ] && say mem_total_kb="$kb"
done < /proc/meminfo
say done=1
