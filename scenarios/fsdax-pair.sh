# Guest scenario: two fsdax namespaces (map=dev) on two legacy pmem regions,
# both pfn devices unbound and then bound at the same time, ROUNDS times:
# two memmap inits run at once, each shared among the CPUs' threads. Data
# written to each namespace must read back identical after every round.
set -eu
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
DATA_MIB=${DATA_MIB:-4}
drv=$ND_PMEM
need ndctl
enable_memmap_debug
# The series' own line: how many threads shared each range.
echo 'func memmap_init_zone_device +p' > /proc/dynamic_debug/control ||
	fail "cannot enable dynamic debug for memmap_init_zone_device"
quiesce
cap=/sys/module/mm_init/parameters/zone_device_init_threads
[ -r "$cap" ] || fail "no $cap: a kernel without the parallel memmap init"
say cpus="$(nproc)" thread_cap="$(cat "$cap")"

for r in 0 1; do
	ndctl create-namespace -f -e "namespace$r.0" -m fsdax -M dev >/dev/null ||
		fail "ndctl create-namespace fsdax on namespace$r.0"
done
settle
for r in 0 1; do
	[ -b "/dev/pmem$r" ] || fail "no /dev/pmem$r after create-namespace"
	pfn=$(pfn_of "pmem$r")
	say "pfn$r=$pfn" "pfn_size$r=$(cat "/sys/bus/nd/devices/$pfn/size")"
	head -c "$((DATA_MIB * 1048576))" /dev/urandom > "/tmp/memlab-data$r"
	dd if="/tmp/memlab-data$r" of="/dev/pmem$r" bs=1M oflag=direct status=none ||
		fail "write pmem$r"
	sum=$(checksum "/dev/pmem$r" "$DATA_MIB")
	[ "$sum" = "$(checksum "/tmp/memlab-data$r" "$DATA_MIB")" ] ||
		fail "pmem$r reads back other data than written"
	say "checksum_before$r=$sum"
done
pfn0=$(pfn_of pmem0)
pfn1=$(pfn_of pmem1)

i=1
while [ "$i" -le "$ROUNDS" ]; do
	echo "$pfn0" > "$drv/unbind" || fail "unbind $pfn0"
	echo "$pfn1" > "$drv/unbind" || fail "unbind $pfn1"
	echo "$pfn0" > "$drv/bind" & bind0=$!
	echo "$pfn1" > "$drv/bind" & bind1=$!
	wait "$bind0" || fail "bind $pfn0"
	wait "$bind1" || fail "bind $pfn1"
	settle
	say round="$i"
	i=$((i + 1))
done
for r in 0 1; do
	say "checksum_after$r=$(checksum "/dev/pmem$r" "$DATA_MIB")"
done
say done=1
