// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/config_env.c - blitz_config_from_env() (core/sched/config.c),
 * the reader of the BLITZ_* policy knobs, on any environment.
 *
 * The input is lines of NAME=VALUE: the environment the parser sees.  This
 * target's getenv() answers every BLITZ_* name from the input (unset if the
 * input has no line for it) and any other name from the real environment,
 * so that an input is run without setenv(), which keeps every string it was
 * ever given.
 * Properties: whatever the parse accepts, blitz_config_validate() accepts
 * (the two agree on every limit); a rejected environment gives -EINVAL and
 * a message, whatever the room for it, and leaves the configuration as it
 * was.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <blitz/config.h>
#include "fuzz.h"

#define MAX_VARS	32

/* The environment of the input being run: the first line for a name wins, as in environ. */
static struct {
	int n;
	const char *name[MAX_VARS], *value[MAX_VARS];
} env;

char *getenv(const char *name)
{
	static char *(*real)(const char *);

	if (!strncmp(name, "BLITZ_", 6)) {
		for (int i = 0; i < env.n; i++)
			if (!strcmp(env.name[i], name))
				return (char *)env.value[i];
		return NULL;
	}
	if (!real)
		real = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
	return real ? real(name) : NULL;
}

/* set_env - the NAME=VALUE lines of @text as the environment. */
static void set_env(char *text)
{
	env.n = 0;
	for (char *line = strtok(text, "\n"); line && env.n < MAX_VARS; line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		env.name[env.n] = line;
		env.value[env.n++] = eq + 1;
	}
}

/* same - every field of @a and @b equal (memcmp would compare the padding too). */
static bool same(const struct blitz_config *a, const struct blitz_config *b)
{
	return a->workers == b->workers && a->lifo == b->lifo &&
	       a->global_interval == b->global_interval && a->steal == b->steal &&
	       a->budget == b->budget && a->backend == b->backend &&
	       a->trace_sample == b->trace_sample &&
	       a->max_blocking_threads == b->max_blocking_threads &&
	       a->blocking_idle_ms == b->blocking_idle_ms && a->wake == b->wake &&
	       a->wake_backlog_ns == b->wake_backlog_ns && a->wake_busy_ns == b->wake_busy_ns &&
	       a->hist_sample == b->hist_sample && a->park_timeout_ns == b->park_timeout_ns &&
	       a->wake_min_backlog_ns == b->wake_min_backlog_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct blitz_config cfg, before, again;
	char err[256] = "", tiny[12] = "", check[256];
	int r;

	set_env(text);
	blitz_config_default(&cfg);
	before = again = cfg;
	r = blitz_config_from_env(&cfg, err, sizeof(err));
	FUZZ_CHECK(blitz_config_from_env(&again, tiny, sizeof(tiny)) == r);
	if (r) {
		FUZZ_CHECK(r == -EINVAL && err[0] && memchr(err, '\0', sizeof(err)));
		FUZZ_CHECK(tiny[0] && memchr(tiny, '\0', sizeof(tiny)));
		FUZZ_CHECK(same(&cfg, &before) && same(&again, &before));
	} else {
		FUZZ_CHECK(same(&cfg, &again));
		FUZZ_CHECK(blitz_config_validate(&cfg, check, sizeof(check)) == 0);
	}
	env.n = 0;
	free(text);
	return 0;
}
