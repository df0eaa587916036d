// SPDX-License-Identifier: MIT
/*
 * A program built against an INSTALLED libflexrr (scripts/test-install.sh):
 * two local ranks (bootstrap) open the shm transport, each writes a counter
 * into the other's region, and the run entry point answers --help.  Prints
 * "hello: ok" and exits 0 when all of it worked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <flexrr/base.h>
#include <flexrr/bootstrap.h>
#include <flexrr/job.h>
#include <flexrr/transport.h>

#define TIMEOUT_MS 20000

/* Rank r writes r + 100 into its peer's region, then waits for the
 * peer's value in its own. */
static int exchange(struct frr_oob *oob, struct frr_tp_ctx *ctx)
{
	struct frr_tp_addr addrs[2], me;
	struct frr_tp_desc descs[2], mine;
	struct frr_tp_ep *eps[2] = { NULL, NULL };
	struct frr_tp_rmr *rmr = NULL;
	struct frr_tp_mr *mr = NULL;
	int peer = 1 - oob->rank, err;
	long long deadline;

	err = frr_tp_mr_alloc(ctx, 4096, FRR_TP_ACCESS_REMOTE_WRITE, &mr);
	if (!err)
		err = frr_tp_addr_get(ctx, &me);
	if (!err)
		err =
		    frr_oob_allgather(oob, &me, sizeof(me), addrs, TIMEOUT_MS);
	if (!err)
		err = frr_tp_connect_all(ctx, addrs, 2, TIMEOUT_MS, eps);
	if (!err)
		err = frr_tp_mr_export(mr, &mine);
	if (!err)
		err = frr_oob_allgather(oob, &mine, sizeof(mine), descs,
					TIMEOUT_MS);
	if (!err)
		err = frr_tp_rmr_import(eps[peer], &descs[peer], &rmr);
	if (!err)
		err = frr_tp_write_u64(eps[peer], rmr, 0,
				       (uint64_t)oob->rank + 100, 0, 0);
	if (!err)
		err = frr_tp_flush(eps[peer], TIMEOUT_MS);
	deadline = frr_now_ms() + TIMEOUT_MS;
	while (!err && frr_tp_load_u64(frr_tp_mr_ptr(mr)) != 100u + peer)
		if (frr_now_ms() > deadline)
			err = -ETIMEDOUT;
	if (!err)
		err = frr_oob_barrier(oob, TIMEOUT_MS);
	if (rmr)
		frr_tp_rmr_release(rmr);
	if (eps[peer])
		frr_tp_ep_close(eps[peer]);
	if (mr)
		frr_tp_mr_free(mr);
	return err;
}

static int rank_main(struct frr_oob *oob, void *arg)
{
	struct frr_tp_config cfg = { .backend = FRR_TP_BACKEND_SHM,
				     .job_token = oob->job_token,
				     .job_secret = oob->secret,
				     .rank = oob->rank,
				     .nranks = oob->size };
	struct frr_tp_ctx *ctx;
	int err;

	(void)arg;
	err = frr_tp_open(&cfg, &ctx);
	if (err)
		return err;
	err = exchange(oob, ctx);
	frr_tp_close(ctx);
	if (err)
		frr_err("hello: rank %d: %s", oob->rank, strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	static const struct frr_app_ops *const no_apps[] = { NULL };
	char *help[] = { argv[0], "--help", NULL };

	(void)argc;
	if (frr_launch_local(2, rank_main, NULL, 2 * TIMEOUT_MS))
		return 1;
	/* the program entry point links and prints the run options */
	if (frr_run_main(2, help, no_apps))
		return 1;
	printf("hello: ok\n");
	return 0;
}
