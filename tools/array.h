/* SPDX-License-Identifier: MIT */
/*
 * tools/array.h - growable arrays for the tools' user side: the elements
 * a tool keeps per worker, per record, per process, appended one by one.
 */
#ifndef BLITZ_TOOLS_ARRAY_H
#define BLITZ_TOOLS_ARRAY_H

#include <stddef.h>

/* struct array - n elements of size bytes at p, room for cap. */
struct array {
	void *p;
	size_t n, cap, size;
};

#define ARRAY_OF(type) ((struct array){ .size = sizeof(type) })

/*
 * array_push - one more element at the end, zeroed: its address (valid
 * until the next push), or NULL if out of memory (the array unchanged).
 */
void *array_push(struct array *a);

static inline void *array_at(const struct array *a, size_t i)
{
	return (char *)a->p + i * a->size;
}

void array_free(struct array *a);

#endif /* BLITZ_TOOLS_ARRAY_H */
