# Guest scenario: DEVICE_PRIVATE memory through the in-tree test_hmm module.
# Each load registers two dmirror devices, each with one CHUNK_MB chunk of
# DEVICE_PRIVATE memory (memremap_pages -> memmap_init_zone_device); each
# unload gives it back. LOADS load/unload cycles. CHUNK_MB needs the lab
# patch that makes test_hmm's chunk size a module parameter.
set -eu
. "$(dirname "$0")/lib.sh"
LOADS=${LOADS:-3}
: "${CHUNK_MB:?CHUNK_MB must give the chunk size in MB}"
: "${MODULE:?MODULE must name the built test_hmm.ko}"
need insmod
need rmmod
[ -f "$MODULE" ] || fail "no module $MODULE (CONFIG_TEST_HMM=m in the lab config?)"
enable_memmap_debug
quiesce
say phase=load loads="$LOADS" chunk_bytes=$((CHUNK_MB * 1048576)) devices=2
i=1
while [ "$i" -le "$LOADS" ]; do
	insmod "$MODULE" chunk_mb="$CHUNK_MB" || fail "insmod test_hmm (load $i)"
	settle
	rmmod test_hmm || fail "rmmod test_hmm (load $i)"
	say load="$i"
	i=$((i + 1))
done
say done=1
