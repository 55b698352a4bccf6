/* SPDX-License-Identifier: MIT */
/*
 * tools/map_snapshot.h - copies of a BPF map sorted by key, and the change
 * between two reads.
 */
#ifndef BLITZ_TOOLS_MAP_SNAPSHOT_H
#define BLITZ_TOOLS_MAP_SNAPSHOT_H

#include <stddef.h>
#include <linux/types.h>

/*
 * struct snap - a copy of a map whose keys are __s32 arrays and whose values
 * are __u64 arrays, sorted by key (as signed ints, in order).
 */
struct snap {
	size_t key_size, val_size;	/* bytes */
	size_t n, cap;
	char *keys;
	__u64 *vals;			/* n * val_size / 8 */
};

void snap_init(struct snap *s, size_t key_size, size_t val_size);
void snap_free(struct snap *s);
/* Read the whole map into @s (replacing its contents). 0 or -errno. */
int snap_read(int map_fd, struct snap *s);
/*
 * snap_delta - read the map into @cur and make @cur the change since @prev
 * (the previous read, which becomes this read).  With both empty at first,
 * the first call gives the totals.  0 or -errno.
 */
int snap_delta(int map_fd, struct snap *cur, struct snap *prev);
static inline const void *snap_key(const struct snap *s, size_t i)
{
	return s->keys + i * s->key_size;
}
static inline __u64 *snap_val(const struct snap *s, size_t i)
{
	return s->vals + i * (s->val_size / 8);
}

#endif /* BLITZ_TOOLS_MAP_SNAPSHOT_H */
