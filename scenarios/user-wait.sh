# Guest scenario: one thing a user waits for, from the command to the
# memory being there, between two marks on the kernel's clock:
#   WAIT=daxctl-online     the legacy pmem region as devdax, added as
#                          system RAM with every block offline, then
#                          `daxctl online-memory` until every block is
#                          online (movable)
#   WAIT=create-namespace  `ndctl create-namespace` of an fsdax namespace
#                          (map=dev) on the region, to its block device
#   WAIT=virtio-mem        a virtio-mem device, empty at boot, asked
#                          through QEMU's monitor for PLUG_MIB until
#                          MemTotal shows it (the start is the driver's
#                          own line as it reads the new size)
# The onlines and the ZONE_DEVICE memmap init inside the wait are timed by
# the lab patches; the memory is then used from userspace and read back.
# userwait.py sets the marks, with the CPUs' idle time at each. The
# tools run in a root in memory (tools_in_memory), as from the page cache
# of a system that has run them before: the guest's files are the host's,
# over 9p, and every read of one would stop the guest for as long as the
# host takes.
set -eu
. "$(dirname "$0")/lib.sh"
WAIT=${WAIT:?which wait}
PLUG_MIB=${PLUG_MIB:-1024}
FILL_MIB=${FILL_MIB:-}	# used after the wait; default: half the new memory
WAIT_S=${WAIT_S:-600}
enable_online_debug
enable_memmap_debug
quiesce

mem=/sys/devices/system/memory
userwait() { python3 "$(dirname "$0")/userwait.py" "$@"; }
ROOT=/tmp/memlab-root

# copy_in FILE: FILE into ROOT at its own path, and what it links to.
copy_in() {
	f="$(readlink -f "$(dirname "$1")")/$(basename "$1")"
	cp -P --parents "$f" $ROOT && cp -P --parents "$(readlink -f "$f")" $ROOT ||
		fail "copy $1 into $ROOT"
}

# tools_in_memory TOOL...: a root in a tmpfs at ROOT with each TOOL, the
# libraries it loads, the configuration libndctl, libdaxctl and libkmod
# read, and this kernel's module indexes; /sys, /proc, /dev and /run bound
# in.
tools_in_memory() {
	mkdir -p $ROOT && mount -t tmpfs memlab-root $ROOT || fail "mount a tmpfs at $ROOT"
	for dir in bin lib lib64 sbin; do ln -s usr/$dir $ROOT/$dir; done
	for tool in "$@"; do
		bin=$(command -v "$tool")
		copy_in "$bin"
		for lib in $(ldd "$bin" | awk '$2 == "=>" {print $3} $1 ~ /^\// {print $1}'); do
			copy_in "$lib"
		done
	done
	copy_in /etc/ld.so.cache
	for dir in /etc/ndctl.conf.d /etc/daxctl.conf.d /etc/modprobe.d /lib/modprobe.d; do
		[ ! -d $dir ] || cp -RP --parents "$(readlink -f $dir)" $ROOT || fail "copy $dir"
	done
	mods=$(readlink -f /lib)/modules/$(uname -r)
	mkdir -p $ROOT$mods && cp -L /lib/modules/"$(uname -r)"/modules.* $ROOT$mods/ ||
		fail "copy the module indexes"
	for dir in sys proc dev run; do
		mkdir -p $ROOT/$dir && mount --bind /$dir $ROOT/$dir || fail "bind /$dir in $ROOT"
	done
}
case "$WAIT" in
daxctl-online)
	need ndctl
	need daxctl
	ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null ||
		fail "ndctl create-namespace devdax"
	settle
	kmem_add_offline dax0.0
	tools_in_memory daxctl
	userwait run $ROOT daxctl online-memory dax0.0 || fail "daxctl online-memory dax0.0"
	left=$(kmem_offline_blocks | grep -c memory || true)
	block_bytes=$((0x$(cat $mem/block_size_bytes)))
	say blocks="$nr_blocks" block_bytes="$block_bytes" offline_after="$left"
	[ "$left" -eq 0 ] || fail "$left of $nr_blocks blocks offline after daxctl online-memory"
	fill_movable "${FILL_MIB:-$((nr_blocks * block_bytes / 2 / 1048576))}"
	;;
create-namespace)
	need ndctl
	tools_in_memory ndctl
	userwait run $ROOT ndctl create-namespace -f -e namespace0.0 -m fsdax -M dev ||
		fail "ndctl create-namespace fsdax map=dev"
	[ -b /dev/pmem0 ] || fail "no /dev/pmem0 after create-namespace"
	pfn=$(pfn_of pmem0)
	case "$pfn" in pfn*) ;; *) fail "pmem0 is on $pfn, not on a pfn device" ;; esac
	say pfn_size="$(cat /sys/bus/nd/devices/$pfn/size)"
	head -c 4194304 /dev/urandom > /tmp/memlab-data
	dd if=/tmp/memlab-data of=/dev/pmem0 bs=1M oflag=direct status=none || fail "write pmem0"
	[ "$(checksum /dev/pmem0 4)" = "$(checksum /tmp/memlab-data 4)" ] ||
		fail "pmem0 reads back other data than written"
	;;
virtio-mem)
	[ -n "$(ls /sys/bus/virtio/drivers/virtio_mem/ 2>/dev/null | grep virtio)" ] ||
		fail "no device on the virtio_mem driver"
	echo online_movable > $mem/auto_online_blocks ||
		fail "cannot set auto_online_blocks to online_movable"
	boot_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
	userwait memtotal $((PLUG_MIB << 20)) \
		$((boot_kb + PLUG_MIB * 1024)) "$WAIT_S" || fail "MemTotal did not grow by $PLUG_MIB MiB"
	fill_movable "${FILL_MIB:-$((PLUG_MIB / 2))}"
	;;
*)
	fail "unknown WAIT=$WAIT"
	;;
esac
say done=1
