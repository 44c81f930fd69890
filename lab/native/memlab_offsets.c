// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled against the built kernel (kbuild, M=) to assembly only: the
 * "->NAME value" lines give the native benchmark the real struct page
 * size, field offsets and flag bits of that kernel, so nothing is typed
 * by hand. Never linked or loaded.
 */
#include <linux/kbuild.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/page-flags.h>

int main(void);
int main(void)
{
	DEFINE(STRUCT_PAGE_SIZE, sizeof(struct page));
	OFFSET(PAGE_FLAGS, page, flags);
	OFFSET(PAGE_LRU, page, lru);
	OFFSET(PAGE_MAPPING, page, mapping);
	OFFSET(PAGE_PGMAP, page, pgmap);
	OFFSET(PAGE_ZONE_DEVICE_DATA, page, zone_device_data);
	OFFSET(PAGE_MAPCOUNT, page, _mapcount);
	OFFSET(PAGE_REFCOUNT, page, _refcount);
	DEFINE(PAGE_PG_RESERVED, PG_reserved);
	DEFINE(PAGE_TYPE_OFFLINE, (unsigned int)PGTY_offline << 24);
	DEFINE(PAGE_FLAGS_PREP, PAGE_FLAGS_CHECK_AT_PREP);
	DEFINE(PAGE_ZONES_PGSHIFT, ZONES_PGSHIFT);
	DEFINE(PAGE_NODES_PGSHIFT, NODES_PGSHIFT);
	DEFINE(PAGE_ZONE_DEVICE, ZONE_DEVICE);
	DEFINE(PAGES_PER_SECTION, PAGES_PER_SECTION);
	return 0;
}
