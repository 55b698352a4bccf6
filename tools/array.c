// SPDX-License-Identifier: MIT
/* tools/array.c - growable arrays (array.h). */
#include <stdlib.h>
#include <string.h>
#include "array.h"

void *array_push(struct array *a)
{
	void *e;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		void *p = realloc(a->p, cap * a->size);

		if (!p)
			return NULL;
		a->p = p;
		a->cap = cap;
	}
	e = array_at(a, a->n++);
	memset(e, 0, a->size);
	return e;
}

void array_free(struct array *a)
{
	free(a->p);
	a->p = NULL;
	a->n = a->cap = 0;
}
