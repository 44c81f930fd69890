# Guest scenario: a virtio-mem device, none of it plugged at boot, grown and
# shrunk at run time CYCLES times. The script asks the host for each size
# ("MEMLAB virtio_mem_request=BYTES": the host sets the device's
# requested-size through QEMU's monitor) and waits for the kernel to follow.
# Each plug's memory blocks are onlined movable (each online timed by the lab
# patch), then used from userspace (tmpfs files of random data, read back)
# and freed; each unplug must take every block away again.
set -eu
. "$(dirname "$0")/lib.sh"
CYCLES=${CYCLES:-3}
PLUG_MIB=${PLUG_MIB:-1024}
WAIT_S=${WAIT_S:-300}
enable_online_debug
quiesce

mem=/sys/devices/system/memory
[ -n "$(ls /sys/bus/virtio/drivers/virtio_mem/ 2>/dev/null | grep virtio)" ] ||
	fail "no device on the virtio_mem driver"
block_bytes=$((0x$(cat $mem/block_size_bytes)))
say block_bytes="$block_bytes"
# Movable, so that the files below can land on the new memory and the
# unplug can offline it once they are gone.
say auto_online="$(cat $mem/auto_online_blocks)"
echo online_movable > $mem/auto_online_blocks ||
	fail "cannot set auto_online_blocks to online_movable"

mem_total_kb() { awk '/^MemTotal:/ {print $2}' /proc/meminfo; }
online_blocks() { grep -l '^online$' $mem/memory*/state | wc -l; }
# wait_total KB: until MemTotal is KB, at most WAIT_S seconds.
wait_total() {
	waited=0
	while [ "$(mem_total_kb)" -ne "$1" ]; do
		[ "$waited" -lt "$WAIT_S" ] ||
			fail "MemTotal $(mem_total_kb) kB after ${WAIT_S}s, waiting for $1 kB"
		sleep 1
		waited=$((waited + 1))
	done
}

boot_kb=$(mem_total_kb)
boot_blocks=$(online_blocks)
say boot_total_kb="$boot_kb" boot_blocks="$boot_blocks"
i=1
while [ "$i" -le "$CYCLES" ]; do
	say virtio_mem_request=$((PLUG_MIB << 20))
	wait_total $((boot_kb + PLUG_MIB * 1024))
	settle
	say cycle="$i" plugged_blocks=$(($(online_blocks) - boot_blocks))
	fill_movable $((PLUG_MIB * 3 / 4))
	say virtio_mem_request=0
	wait_total "$boot_kb"
	say unplugged="$i" blocks_left=$(($(online_blocks) - boot_blocks))
	i=$((i + 1))
done
say done=1
