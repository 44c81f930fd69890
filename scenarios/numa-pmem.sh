# Guest scenario: a NUMA machine, two nodes with CPUs and one with memory
# only, a legacy pmem region on the second node and one on the memory-only
# node (whose memmap init runs on the CPUs of the binding CPU's node). Each
# region becomes an fsdax namespace (map=dev); data written to each must read
# back identical after ROUNDS unbind/bind rounds. Boot's deferred init runs
# a thread per node: the kernel's lines are on the console.
set -eu
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-2}
DATA_MIB=${DATA_MIB:-4}
drv=$ND_PMEM
need ndctl
enable_memmap_debug
enable_share_debug
quiesce
cap=/sys/module/mm_init/parameters/zone_device_init_threads
[ -r "$cap" ] || fail "no $cap: a kernel without the parallel memmap init"
say thread_cap="$(cat "$cap")"

nodes=0
for node in /sys/devices/system/node/node[0-9]*; do
	[ -d "$node" ] || continue
	n=${node##*node}
	say "node${n}_cpus=$(cat "$node/cpulist")" \
		"node${n}_mem_kb=$(awk '/MemTotal/ {print $4}' "$node/meminfo")"
	nodes=$((nodes + 1))
done
say nodes="$nodes"
for r in 0 1; do
	say "region${r}_node=$(cat "/sys/bus/nd/devices/region$r/numa_node")"
done

create_fsdax_pair
i=1
while [ "$i" -le "$ROUNDS" ]; do
	for r in 0 1; do
		rebind "$drv" "$(pfn_of "pmem$r")"
	done
	i=$((i + 1))
done
for r in 0 1; do
	say "checksum_after$r=$(checksum "/dev/pmem$r" "$DATA_MIB")"
done
say done=1
