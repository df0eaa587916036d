// SPDX-License-Identifier: MIT
/*
 * The rr mailbox validator (runtime/rr/rr_proto.c rr_msg_handle): a worker
 * of a 2-rank x 2-thread job, in a state the input picks (its clock and
 * open offers), handles the input's messages one by one until one is
 * refused.  Whatever it accepts keeps its queue and offers consistent.
 *
 * Input: 8-byte header (clock, noffers, then per offer a state byte and a
 * range from the offer table below), then 64-byte struct frr_rr_msg
 * images; from/to are kept as given (the runtime sets them, but the
 * validator must not trust it).
 */
#include <errno.h>

#include "fuzz.h"
#include "rr_proto.h"

#define NITEMS 64

static int env_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	(void)env;
	FUZZ_CHECK(from >= 0 && from < 4 && to >= 0 && to < 4 && m);
	return 0;
}

static int env_recv(void *env, int w, struct frr_rr_msg *m, int timeout_ms)
{
	(void)env, (void)w, (void)m, (void)timeout_ms;
	return 0;
}

static uint64_t env_nitems(void *env, int v)
{
	(void)env, (void)v;
	return NITEMS;
}

static const struct rr_env_ops ops = {
	.send = env_send,
	.recv = env_recv,
	.nitems = env_nitems,
};

static const struct rr_config cfg = {
	.P = 2,
	.T = 2,
	.W = 4,
	.group_size = 3,
	.threshold = 0.2,
	.max_helpers = 3,
	.timeout_ms = 1000,
	.slack = 1,
	.remote_ok = 1,
};

/* Offers the input may open: helper i of the group, range from the byte. */
static void seed_offers(struct rr_worker *rw, const uint8_t *h)
{
	rw->clock = h[0] % 8;
	rw->noffers = h[1] % (rw->nhelpers + 1);
	for (int i = 0; i < rw->noffers; i++) {
		struct rr_offer *o = &rw->offers[i];
		uint8_t b = h[2 + i];

		o->helper = rw->helpers[i];
		o->state = (enum rr_offer_state)(b % RR_OFFER_NSTATES);
		o->a = (uint64_t)(b >> 3) % NITEMS;
		o->b = o->a + 1 + (b % 4);
		o->id = (uint64_t)i + 1;
	}
}

static void check(const struct rr_worker *rw)
{
	FUZZ_CHECK(rw->ntasks >= 0 && rw->ntasks <= rw->cap_tasks);
	for (int i = 0; i < rw->ntasks; i++) {
		const struct rr_task *t = &rw->tasks[i];

		FUZZ_CHECK(t->helpee >= 0 && t->helpee < cfg.W);
		FUZZ_CHECK(t->clock >= 0 && t->a < t->b && t->b <= NITEMS);
	}
	FUZZ_CHECK(rw->k_done >= 0 && rw->k_done <= rw->noffers);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct rr_worker rw;
	struct frr_rr_msg m;

	if (n < 8 || rr_worker_init(&rw, &cfg, &ops, NULL, 1, NULL))
		return 0;
	seed_offers(&rw, data);
	for (size_t off = 8; off + sizeof(m) <= n; off += sizeof(m)) {
		int err;

		memcpy(&m, data + off, sizeof(m));
		err = rr_msg_handle(&rw, &m);
		FUZZ_CHECK(err == 0 || err == -EPROTO);
		check(&rw);
		if (err)
			break;
	}
	rr_worker_fini(&rw);
	return 0;
}
