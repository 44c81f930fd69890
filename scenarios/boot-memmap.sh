# Guest scenario: boot. The kernel timed its memmap init of all boot memory
# on the console (lab patch 0004); report what memory it manages and on how
# many nodes (with deferred init, each has a thread of its own). Then, with
# FILL_PCT, use that share of the available memory from userspace and read
# it back: every page the boot freed that it takes is allocated (on a
# DEBUG_VM kernel, each checked as it leaves the free lists).
set -eu
. "$(dirname "$0")/lib.sh"
FILL_PCT=${FILL_PCT:-0}
available_now() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }
say mem_total_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
available_kb=$(available_now)
# Without NUMA there is no node directory: all memory is node 0's.
nodes=0
for node in /sys/devices/system/node/node[0-9]*; do
	[ -d "$node" ] || continue
	grep -q 'MemTotal: *[1-9]' "$node/meminfo" && nodes=$((nodes + 1))
done
say memory_nodes=$((nodes > 0 ? nodes : 1))
if [ "$FILL_PCT" -gt 0 ]; then
	fill_memory $((available_kb * FILL_PCT / 100 / 1024))
	check_fill
	say available_kb="$available_kb" available_filled_kb="$(available_now)" \
		fill_mib="$fill_mib" bad_files="$bad_files"
	fail_on_bad_fill
	drop_fill
fi
say done=1
