# Guest scenario: DEVICE_PRIVATE memory through the in-tree test_hmm module.
# Each load registers two dmirror devices, each with one 256 MB chunk of
# DEVICE_PRIVATE memory (memremap_pages -> memmap_init_zone_device); each
# unload gives it back. LOADS load/unload cycles.
set -eu
. "$(dirname "$0")/lib.sh"
LOADS=${LOADS:-3}
: "${MODULE:?MODULE must name the built test_hmm.ko}"
need insmod
need rmmod
[ -f "$MODULE" ] || fail "no module $MODULE (CONFIG_TEST_HMM=m in the lab config?)"
enable_memmap_debug
say phase=load loads="$LOADS" chunk_bytes=268435456 devices=2
i=1
while [ "$i" -le "$LOADS" ]; do
	insmod "$MODULE" || fail "insmod test_hmm (load $i)"
	settle
	rmmod test_hmm || fail "rmmod test_hmm (load $i)"
	say load="$i"
	i=$((i + 1))
done
say done=1
