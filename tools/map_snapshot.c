// SPDX-License-Identifier: MIT
/*
 * tools/map_snapshot.c - copies of a BPF map (keys of __s32, values of
 * __u64) sorted by key, and the change between two reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "map_snapshot.h"

void snap_init(struct snap *s, size_t key_size, size_t val_size)
{
	memset(s, 0, sizeof(*s));
	s->key_size = key_size;
	s->val_size = val_size;
}

void snap_free(struct snap *s)
{
	free(s->keys);
	free(s->vals);
	snap_init(s, s->key_size, s->val_size);
}

static int key_cmp(const void *a, const void *b, size_t size)
{
	const __s32 *x = a, *y = b;

	for (size_t i = 0; i < size / 4; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static size_t g_sort_key_size;

static int entry_cmp(const void *a, const void *b)
{
	return key_cmp(a, b, g_sort_key_size);
}

static int snap_grow(struct snap *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	char *k = realloc(s->keys, cap * s->key_size);

	if (!k)
		return -ENOMEM;
	s->keys = k;
	__u64 *v = realloc(s->vals, cap * s->val_size);

	if (!v)
		return -ENOMEM;
	s->vals = v;
	s->cap = cap;
	return 0;
}

int snap_read(int map_fd, struct snap *s)
{
	char key[64], next[64];
	void *prev = NULL;
	size_t ent = s->key_size + s->val_size;
	char *tmp;

	if (s->key_size > sizeof(key))
		return -EINVAL;
	s->n = 0;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		if (s->n == s->cap && snap_grow(s))
			return -ENOMEM;
		memcpy(s->keys + s->n * s->key_size, next, s->key_size);
		if (bpf_map_lookup_elem(map_fd, next, snap_val(s, s->n)) == 0)
			s->n++;
		memcpy(key, next, s->key_size);
		prev = key;
	}
	if (s->n < 2)
		return 0;
	/* Sort key+value pairs together through a packed copy. */
	tmp = malloc(s->n * ent);
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		memcpy(tmp + i * ent, snap_key(s, i), s->key_size);
		memcpy(tmp + i * ent + s->key_size, snap_val(s, i), s->val_size);
	}
	g_sort_key_size = s->key_size;
	qsort(tmp, s->n, ent, entry_cmp);
	for (size_t i = 0; i < s->n; i++) {
		memcpy(s->keys + i * s->key_size, tmp + i * ent, s->key_size);
		memcpy(snap_val(s, i), tmp + i * ent + s->key_size, s->val_size);
	}
	free(tmp);
	return 0;
}

int snap_delta(int map_fd, struct snap *cur, struct snap *prev)
{
	size_t words = cur->val_size / 8, j = 0;
	int r = snap_read(map_fd, cur);

	if (r)
		return r;
	/* prev keeps this read; cur becomes the difference. */
	struct snap now;

	snap_init(&now, cur->key_size, cur->val_size);
	for (size_t i = 0; i < cur->n; i++) {
		if (now.n == now.cap && snap_grow(&now))
			return -ENOMEM;
		memcpy(now.keys + i * now.key_size, snap_key(cur, i), cur->key_size);
		memcpy(snap_val(&now, i), snap_val(cur, i), cur->val_size);
		now.n++;
	}
	/* Both sorted: walk them together. */
	for (size_t i = 0; i < cur->n; i++) {
		while (j < prev->n && key_cmp(snap_key(prev, j), snap_key(cur, i), cur->key_size) < 0)
			j++;
		if (j < prev->n && !key_cmp(snap_key(prev, j), snap_key(cur, i), cur->key_size))
			for (size_t w = 0; w < words; w++)
				snap_val(cur, i)[w] -= snap_val(prev, j)[w];
	}
	snap_free(prev);
	*prev = now;
	return 0;
}
