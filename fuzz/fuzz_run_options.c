// SPDX-License-Identifier: MIT
/* The run options (flexrr run ...: runtime/launch/options.c): the input is
 * the argument list, NUL-separated; a parsed and finalized job must have a
 * sane shape, finite thresholds and positive deadlines. */
#include <math.h>

#include "fuzz.h"
#include "launch.h"

static const struct frr_app_ops app = { .size = sizeof(app), .name = "toy" };
static const struct frr_app_ops *const apps[] = { &app, NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char buf[4096];
	char *argv[64];
	struct frr_job job;
	int argc = 0;

	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, data, n);
	buf[n] = '\0';
	argv[argc++] = "run";
	for (char *p = buf; p < buf + n && argc < 63; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	frr_job_init(&job, "flexrr run", apps);
	if (!frr_job_parse_argv(&job, argc, argv) && !frr_job_finalize(&job)) {
		const struct frr_run_opts *o = &job.o;

		FUZZ_CHECK(o->p.app == &app);
		FUZZ_CHECK(o->nprocs >= 1 && o->p.threads >= 1 &&
			   o->p.clocks >= 1);
		FUZZ_CHECK(o->p.slack >= 0);
		FUZZ_CHECK(o->p.timeout_ms >= 1 && o->p.dead_ms >= 1 &&
			   o->p.load_ms >= 1);
		FUZZ_CHECK(job.rdv_timeout > 0 && isfinite(job.rdv_timeout));
		FUZZ_CHECK(isfinite(o->p.rr.threshold) &&
			   isfinite(o->p.rr.min_share));
		FUZZ_CHECK(!o->p.have_target || isfinite(o->p.target));
		FUZZ_CHECK(!o->p.rr.stragglers || *o->p.rr.stragglers);
	}
	frr_job_fini(&job);
	return 0;
}
