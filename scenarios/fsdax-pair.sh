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
enable_share_debug
quiesce
cap=/sys/module/mm_init/parameters/zone_device_init_threads
[ -r "$cap" ] || fail "no $cap: a kernel without the parallel memmap init"
say cpus="$(nproc)" thread_cap="$(cat "$cap")"

create_fsdax_pair
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
