# Guest scenario: the kernel's own reports of the way each memmap init went
# and of how large runs of pages are cleared, under the boot parameters the
# host gave the guest (none, or one that turns a fast path off). Boot and
# the deferred init threads report at boot (mminit_loglevel=3); then a
# devdax namespace is bound (ZONE_DEVICE: memmap_init_zone_device()'s debug
# line), handed to dax kmem and onlined movable block by block (hot-added
# memory, mminit trace again), and the new memory used. The host checks
# each report against the parameter.
set -eu
. "$(dirname "$0")/lib.sh"
FILL_MIB=${FILL_MIB:-64}
need ndctl
need daxctl
enable_share_debug
say cmdline="$(tr ' ' '\n' < /proc/cmdline | grep -E '^(memmap_|mm_init\.|clear_pages_)' | tr '\n' ',')"

ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null ||
	fail "ndctl create-namespace devdax"
settle
[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after create-namespace"

kmem_add_offline dax0.0
for b in $blocks; do
	echo online_movable > "$b/state" || fail "online_movable $(basename "$b")"
done
settle
say blocks="$nr_blocks"
fill_movable "$FILL_MIB"
say done=1
