// SPDX-License-Identifier: MIT
/*
 * The app's side of a rank's set-up: creating it (rank 0 first) and
 * checking the tables it declares before anything is sized from them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "flexrr/log.h"
#include "job.h"

/*
 * Rank 0 creates the app first and tells the others how it went: bad app
 * options or a missing input file are reported once, by rank 0, not P
 * times; the others then fail quietly with the same error.
 */
int frr_rt_app_create(struct frr_rt *rt)
{
	const struct frr_rt_params *o = rt->prm;
	int32_t st = 0, *all = calloc((size_t)rt->P, sizeof(int32_t));
	int err;

	if (!all)
		return -ENOMEM;
	if (rt->rank == 0) {
		st = rt->app->create(&rt->job, o->app_argc, o->app_argv,
				     &rt->app_state);
		if (st > 0)
			st = -EINVAL;
	}
	err = frr_rt_allgather(rt, "hearing whether rank 0 created the app",
			       &st, sizeof(st), all);
	if (!err && all[0] && rt->rank != 0) {
		frr_dbg("rank 0 could not create app %s (%d); stopping",
			rt->app->name, all[0]);
		err = all[0];
	} else if (!err) {
		err = st;
	}
	free(all);
	if (err || rt->rank == 0)
		return err;
	err =
	    rt->app->create(&rt->job, o->app_argc, o->app_argv, &rt->app_state);
	return err > 0 ? -EINVAL : err;
}

/* A table's rule, combine and flags are ones this runtime knows (an app
 * built against an older header may hold push_scale where combine is). */
static int table_check_rule(const struct frr_rt *rt, int t,
			    const struct frr_table_spec *s)
{
	const char *name = s->name ? s->name : "?";
	const uint32_t known = FRR_TABLE_SEE_OWN_PENDING |
			       FRR_TABLE_NO_OWN_PENDING | FRR_TABLE_COMPENSATED;

	if ((unsigned)s->rule > FRR_UPDATE_SET) {
		frr_err("app %s: table %d (%s): unknown update rule %u",
			rt->app->name, t, name, (unsigned)s->rule);
		return -EINVAL;
	}
	if ((unsigned)s->combine > FRR_COMBINE_MEAN_OF_SUMS) {
		frr_err("app %s: table %d (%s): unknown combine rule %u "
			"(push_scale was replaced by combine: rebuild the "
			"app against this flexrr.h)",
			rt->app->name, t, name, (unsigned)s->combine);
		return -EINVAL;
	}
	if (s->combine != FRR_COMBINE_SUM && s->rule != FRR_UPDATE_ADD) {
		frr_err("app %s: table %d (%s): a combine rule other than "
			"FRR_COMBINE_SUM needs the ADD rule",
			rt->app->name, t, name);
		return -EINVAL;
	}
	if ((s->flags & FRR_TABLE_COMPENSATED) && s->rule != FRR_UPDATE_ADD) {
		frr_err("app %s: table %d (%s): FRR_TABLE_COMPENSATED needs "
			"the ADD rule (it compensates sums; SET and AdaGrad "
			"tables do not add)",
			rt->app->name, t, name);
		return -EINVAL;
	}
	if (s->flags & ~known) {
		frr_err("app %s: table %d (%s): unknown flags 0x%x (1u << 1 "
			"was FRR_TABLE_SCALE_BY_SHARE: use combine = "
			"FRR_COMBINE_MEAN)",
			rt->app->name, t, name, (unsigned)(s->flags & ~known));
		return -EINVAL;
	}
	return 0;
}

int frr_rt_tables_declare(struct frr_rt *rt)
{
	rt->tb->ntables =
	    rt->app->tables(rt->app_state, rt->tb->spec, FRR_MAX_TABLES);
	if (rt->tb->ntables < 0 && rt->tb->ntables > -4096)
		return rt->tb->ntables; /* the app said what failed */
	if (rt->tb->ntables < 0 || rt->tb->ntables > FRR_MAX_TABLES) {
		frr_err("app %s declared %d tables (at most %d)", rt->app->name,
			rt->tb->ntables, FRR_MAX_TABLES);
		return -EINVAL;
	}
	for (int t = 0; t < rt->tb->ntables; t++) {
		const struct frr_table_spec *s = &rt->tb->spec[t];

		if (!s->rows || !s->cols) {
			frr_err("app %s: table %d (%s) has %" PRIu64
				" rows x %u cols: both must be > 0",
				rt->app->name, t, s->name ? s->name : "?",
				s->rows, s->cols);
			return -EINVAL;
		}
		if (table_check_rule(rt, t, s))
			return -EINVAL;
		if (s->rule == FRR_UPDATE_ADAGRAD &&
		    (s->flags & FRR_TABLE_SEE_OWN_PENDING)) {
			frr_err("app %s: table %d (%s): "
				"FRR_TABLE_SEE_OWN_PENDING needs the ADD or "
				"SET rule",
				rt->app->name, t, s->name ? s->name : "?");
			return -EINVAL;
		}
		if ((s->flags & FRR_TABLE_SEE_OWN_PENDING) &&
		    (s->flags & FRR_TABLE_NO_OWN_PENDING)) {
			frr_err(
			    "app %s: table %d (%s): FRR_TABLE_SEE_OWN_PENDING "
			    "and FRR_TABLE_NO_OWN_PENDING contradict: set "
			    "one",
			    rt->app->name, t, s->name ? s->name : "?");
			return -EINVAL;
		}
		/* the flag as declared: rows written mostly by one partition */
		if (s->flags & FRR_TABLE_SEE_OWN_PENDING) {
			rt->tb->own_pending = 1;
			rt->tb->own_declared |= 1u << t;
		}
		/* read-my-writes is the default on ADD and SET tables (issue
		 * 25); AdaGrad's pending gradients are no values */
		if (s->rule != FRR_UPDATE_ADAGRAD &&
		    !(s->flags & FRR_TABLE_NO_OWN_PENDING))
			rt->tb->spec[t].flags |= FRR_TABLE_SEE_OWN_PENDING;
	}
	return 0;
}
