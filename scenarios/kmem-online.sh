# Guest scenario: the legacy pmem region as devdax, handed to the kernel as
# system RAM (dax kmem) and onlined movable block by block; CYCLES times all
# its blocks offlined and onlined again, each online timed by the lab patch.
# Then most of the new memory is used from userspace (tmpfs files of random
# data, read back) and must be offlined cleanly once freed.
set -eu
. "$(dirname "$0")/lib.sh"
CYCLES=${CYCLES:-3}
FILL_MIB=${FILL_MIB:-}	# default: 3/4 of the hot-added memory
need ndctl
need daxctl
enable_online_debug
quiesce

say phase=create
ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null ||
	fail "ndctl create-namespace devdax"
settle
[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after create-namespace"

mem=/sys/devices/system/memory
block_bytes=$((0x$(cat $mem/block_size_bytes)))
offline_blocks() { grep -l '^offline$' $mem/memory*/state | sed 's,/state$,,'; }
[ -z "$(offline_blocks)" ] || fail "offline memory blocks before kmem"
daxctl reconfigure-device --mode=system-ram --no-online dax0.0 >/dev/null ||
	fail "daxctl reconfigure-device --mode=system-ram"
settle
blocks=$(offline_blocks)
nr_blocks=$(echo "$blocks" | grep -c memory || true)
[ "$nr_blocks" -gt 0 ] || fail "no memory blocks added by dax kmem"
say block_bytes="$block_bytes" blocks="$nr_blocks"

set_state() {  # set_state STATE: every kmem block to STATE, checked
	for b in $blocks; do
		echo "$1" > "$b/state" || fail "$1 $(basename "$b")"
	done
	for b in $blocks; do
		want=$1
		[ "$want" = online_movable ] && want=online
		[ "$(cat "$b/state")" = "$want" ] ||
			fail "$(basename "$b") is $(cat "$b/state"), not $want"
	done
	settle
}

say phase=online cycles="$CYCLES"
set_state online_movable
for b in $blocks; do
	grep -q Movable "$b/valid_zones" || fail "$(basename "$b") not in ZONE_MOVABLE"
done
i=1
while [ "$i" -le "$CYCLES" ]; do
	set_state offline
	set_state online_movable
	say cycle="$i"
	i=$((i + 1))
done

# Use the new memory: tmpfs pages are movable, and ZONE_MOVABLE is the first
# zone movable allocations try, so files the size of most of the hot-added
# memory land there. Each file's data must read back as written.
movable_free() { awk '/^Node .* zone +Movable/ {m=1; next} /^Node/ {m=0} m && /nr_free_pages/ {print $2; exit}' /proc/zoneinfo; }
free_before=$(movable_free)
chunk_mib=16
fill_mib=${FILL_MIB:-$((nr_blocks * block_bytes * 3 / 4 / 1048576))}
files=$((fill_mib / chunk_mib))
head -c $((chunk_mib * 1048576)) /dev/urandom > /tmp/memlab-chunk
want=$(sha256sum < /tmp/memlab-chunk | cut -d' ' -f1)
fill=/dev/shm/memlab-fill
mkdir -p $fill
f=0
while [ "$f" -lt "$files" ]; do
	cp /tmp/memlab-chunk $fill/$f || fail "fill file $f"
	f=$((f + 1))
done
free_filled=$(movable_free)
bad=0
f=0
while [ "$f" -lt "$files" ]; do
	[ "$(sha256sum < $fill/$f | cut -d' ' -f1)" = "$want" ] || bad=$((bad + 1))
	f=$((f + 1))
done
say fill_mib=$((files * chunk_mib)) movable_free_before="$free_before" \
	movable_free_filled="$free_filled" bad_files="$bad"
[ "$bad" -eq 0 ] || fail "$bad of $files files read back other data than written"
rm -rf $fill
say phase=offline
set_state offline
say done=1
