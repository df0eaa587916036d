// SPDX-License-Identifier: MIT
/*
 * Setting a rank up: the layout of the transport regions (control words,
 * inbox slots, replica) and the regions' registration
 * and exchange with the other ranks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "job.h"

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/*
 * Payload capacity of rank o's slots for a sender on another rank: what
 * one of its batches can carry there, so the inbox follows what can
 * arrive, not W x the largest batch.  Another rank's worker writes only
 * the rows of o's shard that some other rank's partitions declare (not
 * those placed with their only writer: MF's users), at most a partition's
 * share of a table flagged "written mostly by one partition", as sparse
 * rows.  A batch larger than that (a row read outside the declarations
 * and written) is split into more chunks, as any batch over a slot is.
 * With RapidReassignment a helper sends its helpees' batches, which may
 * hold anything: the full capacity.
 */
static size_t remote_cap(const struct frr_rt *rt, int o, size_t cap)
{
	uint64_t b = 0,
		 one = frr_seg_bytes(FRR_SEG_SPARSE, 1, rt->tb->max_cols);

	if (rt->rr_reassign)
		return cap;
	for (int t = 0; t < rt->tb->ntables; t++) {
		const struct frr_table_spec *s = &rt->tb->spec[t];
		uint64_t n = frr_rt_shared_rows(rt, t, o);
		uint64_t share = (s->rows + rt->W - 1) / rt->W;

		if (((rt->tb->own_declared >> t) & 1) && n > share)
			n = share;
		if (n)
			b += frr_seg_bytes(FRR_SEG_SPARSE, n, s->cols);
	}
	b = b < one ? one : b;
	return b < cap ? (size_t)b : cap;
}

/* The tables' side: shard sizes, the rows this rank holds, inbox slots. */
static int layout_tables(struct frr_rt *rt)
{
	int P = rt->P, T = rt->T, W = rt->W, err;
	uint8_t *held;

	rt->tb->shard_rows =
	    calloc((size_t)FRR_MAX_TABLES * P, sizeof(uint64_t));
	rt->tb->repl_off = calloc((size_t)FRR_MAX_TABLES * P, sizeof(size_t));
	rt->tb->slot_bytes = calloc((size_t)P, sizeof(size_t));
	rt->tb->rslot_bytes = calloc((size_t)P, sizeof(size_t));
	if (!rt->tb->shard_rows || !rt->tb->repl_off || !rt->tb->slot_bytes ||
	    !rt->tb->rslot_bytes)
		return -ENOMEM;
	for (int t = 0; t < rt->tb->ntables; t++)
		if (rt->tb->spec[t].cols > rt->tb->max_cols)
			rt->tb->max_cols = rt->tb->spec[t].cols;
	for (int t = 0; t < rt->tb->ntables; t++)
		for (int o = 0; o < P; o++) {
			uint64_t rows = rt->tb->spec[t].rows;

			rt->tb->shard_rows[t * P + o] =
			    rows > (uint64_t)o ? (rows - o + P - 1) / P : 0;
		}
	/* the replica: the rows this rank holds (repl_off, repl_len), from
	 * what the partitions loaded here declare */
	held = calloc((size_t)rt->W, 1);
	if (!held)
		return -ENOMEM;
	for (int v = 0; v < rt->W; v++)
		held[v] = (uint8_t)rt->ws->parts[v].loaded;
	err = frr_rt_hold_plan(rt, held);
	free(held);
	if (!err)
		err = frr_direct_plan(rt);
	if (err)
		return err;
	/* slots are freed as soon as the server drains them (table/inbox.c),
	 * so a few per sender keep the pipe full whatever the slack */
	rt->tb->K = FRR_RT_INBOX_SLOTS;
	rt->tb->slot_max = 0;
	for (int o = 0; o < P; o++) {
		size_t cap = frr_rt_chunk_cap(rt, o);

		rt->tb->slot_bytes[o] = frr_slot_bytes(cap);
		rt->tb->rslot_bytes[o] = frr_slot_bytes(remote_cap(rt, o, cap));
		if (rt->tb->slot_bytes[o] > rt->tb->slot_max)
			rt->tb->slot_max = rt->tb->slot_bytes[o];
	}
	rt->tb->inbox_len = (size_t)rt->tb->K *
			    ((size_t)T * rt->tb->slot_bytes[rt->rank] +
			     (size_t)(W - T) * rt->tb->rslot_bytes[rt->rank]);
	return 0;
}

/* The control region's offsets: the words peers write (progress, pushes,
 * heartbeats, stop, stats, acks, mailboxes, pulls), each array starting on
 * its own cache line. */
static void layout_ctl(struct frr_rt *rt)
{
	int P = rt->P, T = rt->T, W = rt->W;
	size_t off;

	rt->stats_rec =
	    align64(8 + 8 * (FRR_MAX_STATS + (size_t)T * FRR_RT_NMETRICS));
	off = 0;
	rt->off_prog = off;
	off += (size_t)W * 64;
	rt->off_done = off;
	off += (size_t)P * 64;
	rt->off_push = off; /* [shard]: 1 + the clock it is pushing */
	off += (size_t)P * 64;
	rt->off_hb = off;
	off += (size_t)P * 64;
	rt->off_stop = off;
	off += 64;
	rt->off_notice = off; /* [writer rank]: dead rank + 1 */
	off += (size_t)P * 64;
	rt->off_stats = off; /* + one staging record after the P slots */
	off += ((size_t)P * FRR_RT_STATS_SLOTS + 1) * rt->stats_rec;
	rt->off_ack = off;
	off += align64((size_t)P * T * rt->tb->K * 8);
	rt->off_mbox = off;
	off += (size_t)T * W * FRR_RR_MBOX_DEPTH * 64;
	rt->off_mack = off;
	off += align64((size_t)T * W * 8);
	rt->off_mstage = off;
	off += (size_t)T * 64;
	rt->off_pullreq = off; /* [requester]: a row wanted (table/hold.c) */
	off += ((size_t)W + P) * 64;
	rt->off_pullack = off; /* [local requester]: the request answered */
	off += ((size_t)T + 1) * 64;
	rt->off_fin = off; /* [rank]: 1 once it has run every clock */
	off += (size_t)P * 64;
	rt->off_eapp = off; /* [shard][local worker][2] (--eager) */
	off += align64((size_t)P * T * 2 * 8);
	rt->off_glob = off; /* the app's globals ring (core/globals.c) */
	rt->glob_rec = align64(8 + 8 * (size_t)rt->nglob);
	off += rt->nglob ? FRR_RT_GLOBALS_RING * rt->glob_rec : 0;
	rt->ctl_len = off;
}

int frr_rt_layout(struct frr_rt *rt)
{
	int err = layout_tables(rt);

	if (err)
		return err;
	layout_ctl(rt);
	return 0;
}

/* ---- transport set-up --------------------------------------------------- */
struct rank_info {
	struct frr_tp_addr addr;
	struct frr_tp_desc ctl, inbox, repl;
	uint64_t nitems[]; /* T */
};

static size_t rank_info_len(const struct frr_rt *rt)
{
	return sizeof(struct rank_info) + (size_t)rt->T * sizeof(uint64_t);
}

/* The three regions peers write, and what this rank tells the others. */
static int regions_alloc(struct frr_rt *rt, struct rank_info *mine)
{
	int err = frr_tp_mr_alloc(rt->tp, rt->ctl_len,
				  FRR_TP_ACCESS_REMOTE_WRITE, &rt->ctl);

	if (!err)
		err =
		    frr_tp_mr_alloc(rt->tp, rt->tb->inbox_len,
				    FRR_TP_ACCESS_REMOTE_WRITE, &rt->tb->inbox);
	if (!err)
		err = frr_tp_mr_alloc(rt->tp, rt->tb->repl_len,
				      FRR_TP_ACCESS_REMOTE_WRITE |
					  FRR_TP_ACCESS_ON_TOUCH,
				      &rt->tb->repl);
	if (err)
		return err;
	rt->ctlp = frr_tp_mr_ptr(rt->ctl);
	rt->tb->inboxp = frr_tp_mr_ptr(rt->tb->inbox);
	rt->tb->replp = frr_tp_mr_ptr(rt->tb->repl);
	err = frr_tp_addr_get(rt->tp, &mine->addr);
	if (!err)
		err = frr_tp_mr_export(rt->ctl, &mine->ctl);
	if (!err)
		err = frr_tp_mr_export(rt->tb->inbox, &mine->inbox);
	if (!err)
		err = frr_tp_mr_export(rt->tb->repl, &mine->repl);
	for (int t = 0; t < rt->T; t++)
		mine->nitems[t] = rt->ws->parts[rt->rank * rt->T + t].n;
	return err;
}

/* Connect to every rank and import its regions (all: every rank_info). */
static int peers_connect(struct frr_rt *rt, const uint8_t *all, size_t ilen)
{
	struct frr_tp_addr *addrs = calloc((size_t)rt->P, sizeof(*addrs));
	int err;

	if (!addrs)
		return -ENOMEM;
	for (int r = 0; r < rt->P; r++) {
		const struct rank_info *ri =
		    (const struct rank_info *)(all + r * ilen);

		addrs[r] = ri->addr;
		for (int t = 0; t < rt->T; t++)
			rt->ws->nitems[r * rt->T + t] = ri->nitems[t];
	}
	err = frr_tp_connect_all(rt->tp, addrs, rt->P, rt->prm->timeout_ms,
				 rt->eps);
	free(addrs);
	for (int r = 0; r < rt->P && !err; r++) {
		const struct rank_info *ri =
		    (const struct rank_info *)(all + r * ilen);

		if (r == rt->rank)
			continue;
		err = frr_tp_rmr_import(rt->eps[r], &ri->ctl, &rt->rctl[r]);
		if (!err)
			err = frr_tp_rmr_import(rt->eps[r], &ri->inbox,
						&rt->tb->rinbox[r]);
		if (!err)
			err = frr_tp_rmr_import(rt->eps[r], &ri->repl,
						&rt->tb->rrepl[r]);
	}
	return err;
}

static struct frr_tp_config tp_config(const struct frr_rt *rt)
{
	struct frr_tp_config cfg = {
		.backend = rt->prm->backend,
		.job_token = rt->oob->job_token,
		.job_secret = rt->oob->secret,
		.rank = rt->rank,
		.nranks = rt->P,
		/* a write waiting for send-queue room must not hold the
		 * transport lock past what a dead peer is allowed */
		.timeout_ms = rt->flush_ms,
		.gid_index = -1,
		.backend_hint = "use --backend shm",
		.device_hint = "fix FLEXRR_DEVICE",
		.doctor_hint = "run 'flexrr doctor'",
		.timeout_hint = FRR_RT_TIMEOUT_HINT,
		/* its own waits are flush_ms, a third of --dead-timeout */
		.wait_hint = "raise --dead-timeout if the machine is busy",
	};

	return cfg;
}

/* Each worker thread of a rank sends its batches on its own lane: a
 * no-notify transport ctx of its own, connected to every peer's main ctx,
 * so threads post in parallel (no tp_lock) on their own queues / QPs.
 * A lane costs a ctx and an endpoint per peer on both sides (a QP each on
 * verbs): --lanes N bounds them, thread t sending on lane t % N under that
 * lane's lock. */
int frr_rt_lanes_wanted(const struct frr_rt *rt)
{
	return rt->P > 1 && !rt->prm->shared_tp;
}

int frr_rt_lane_count(const struct frr_rt *rt)
{
	if (!frr_rt_lanes_wanted(rt))
		return 0;
	return rt->prm->lanes > 0 && rt->prm->lanes < rt->T ? rt->prm->lanes
							    : rt->T;
}

struct lane_acceptor {
	struct frr_rt *rt;
	int err;
	_Atomic int stop; /* a rank failed: its lanes will not come */
};

/* The peers' lanes, accepted on the main ctx while this rank's connect
 * (nothing else uses the main ctx meanwhile).  It polls, so that the
 * rank's main thread can stop it when a peer fails half-way (the barrier
 * after the connections says so at once) instead of waiting --timeout
 * for lanes that will not come. */
static void *lanes_accept(void *arg)
{
	struct lane_acceptor *a = arg;
	struct frr_rt *rt = a->rt;
	long long dl = frr_now_ms() + rt->prm->timeout_ms;

	frr_log_thread_start(rt->rank, "lanes");
	for (int i = 0; i < rt->nlane_in && !a->err;) {
		a->err =
		    frr_tp_ep_accept(rt->tp, FRR_TP_NOWAIT, &rt->lane_in[i]);
		if (!a->err) {
			i++;
			continue;
		}
		if (a->err != -EAGAIN)
			break;
		a->err = 0;
		if (atomic_load(&a->stop))
			a->err = -ECONNABORTED;
		else if (frr_now_ms() > dl)
			a->err = frr_rt_fail(
			    rt, -ETIMEDOUT,
			    "rank %d: only %d of the other ranks' %d worker "
			    "threads connected within --timeout (%d ms); see "
			    "the other ranks' messages",
			    rt->rank, i, rt->nlane_in, rt->prm->timeout_ms);
		else
			frr_nap_us(500);
	}
	return NULL;
}

/* what: "open" (its ctx) or "connect" (to a peer's lane acceptor) */
static void lane_failed(const struct frr_rt *rt, int t, const char *what,
			int err)
{
	/* a peer that does not answer (stopped, hung) is not a lane's
	 * fault: --shared-transport would wait for it as well */
	if (err == -ETIMEDOUT)
		frr_err("thread %d of rank %d could not %s its own transport "
			"to the other ranks: a rank did not answer in time "
			"(the transport's message above names it)",
			t, rt->rank, what);
	else
		frr_err("thread %d of rank %d could not %s its own transport "
			"to the other ranks (%s); --shared-transport sends "
			"through the rank's one connection instead",
			t, rt->rank, what, strerror(-err));
}

/* Lane t's ctx (opened by thread t, the first of the threads that share
 * it), before any rank connects a lane: a failure here (the device's
 * limits) stops this rank before the barrier, which its peers then leave
 * at once, instead of waiting for lanes that never come. */
static int lane_ctx_open(struct frr_rt *rt, int t)
{
	struct frr_worker *wk = &rt->ws->wk[t];
	struct frr_tp_config cfg = tp_config(rt);
	int err = -ENOMEM;

	cfg.flags = FRR_TP_CFG_NO_NOTIFY;
	wk->dp.lane_ep = calloc((size_t)rt->P, sizeof(*wk->dp.lane_ep));
	wk->dp.lane_inbox = calloc((size_t)rt->P, sizeof(*wk->dp.lane_inbox));
	wk->dp.lane_ctl = calloc((size_t)rt->P, sizeof(*wk->dp.lane_ctl));
	if (wk->dp.lane_ep && wk->dp.lane_inbox && wk->dp.lane_ctl)
		err = rt->test_forge_lane == rt->rank
			  ? -ENOSPC /* as a device out of contexts */
			  : frr_tp_open(&cfg, &wk->dp.lane);
	if (err)
		lane_failed(rt, t, "open", err);
	return err;
}

static int lane_connect(struct frr_rt *rt, int t, const uint8_t *all,
			size_t ilen)
{
	struct frr_worker *wk = &rt->ws->wk[t];
	int err = 0, done = 0;

	for (int r = 0; r < rt->P && !err; r++) {
		const struct rank_info *ri =
		    (const struct rank_info *)(all + r * ilen);

		if (r == rt->rank)
			continue;
		if (rt->test_forge_lane_connect == rt->rank && t == 0 &&
		    done++ == 1) {
			/* the peers' lanes reach this rank first, so they
			 * wait for its lanes, not fail connecting to it */
			sleep(1);
			err = -ECONNREFUSED; /* as a peer's device refusing */
			break;
		}
		err =
		    frr_tp_ep_connect(wk->dp.lane, &ri->addr,
				      rt->prm->timeout_ms, &wk->dp.lane_ep[r]);
		if (!err)
			err = frr_tp_rmr_import(wk->dp.lane_ep[r], &ri->inbox,
						&wk->dp.lane_inbox[r]);
		/* its progress words go on it too (core/ctl.c) */
		if (!err)
			err = frr_tp_rmr_import(wk->dp.lane_ep[r], &ri->ctl,
						&wk->dp.lane_ctl[r]);
	}
	if (err)
		lane_failed(rt, t, "connect", err);
	return err;
}

/* With fewer lanes than threads, thread t >= nlanes takes lane t %
 * nlanes (opened by thread t % nlanes) and every lane its lock. */
static int lanes_share(struct frr_rt *rt)
{
	if (rt->nlanes == rt->T)
		return 0;
	rt->lane_locks = calloc((size_t)rt->nlanes, sizeof(*rt->lane_locks));
	if (!rt->lane_locks)
		return -ENOMEM;
	for (int l = 0; l < rt->nlanes; l++)
		pthread_mutex_init(&rt->lane_locks[l], NULL);
	for (int t = 0; t < rt->T; t++) {
		struct frr_sender *dp = &rt->ws->wk[t].dp;
		const struct frr_sender *o = &rt->ws->wk[t % rt->nlanes].dp;

		dp->lane = o->lane;
		dp->lane_ep = o->lane_ep;
		dp->lane_inbox = o->lane_inbox;
		dp->lane_ctl = o->lane_ctl;
		dp->lane_lock = &rt->lane_locks[t % rt->nlanes];
	}
	return 0;
}

static int lanes_setup(struct frr_rt *rt, const uint8_t *all, size_t ilen)
{
	struct lane_acceptor a = { .rt = rt };
	pthread_t th;
	int err;

	if (!frr_rt_lanes_wanted(rt))
		return 0;
	rt->nlanes = frr_rt_lane_count(rt);
	for (int t = 0; t < rt->nlanes; t++) {
		err = lane_ctx_open(rt, t);
		if (err)
			return err;
	}
	/* every main connection is made before a lane knocks: connect_all
	 * must not accept a lane in place of a peer's main endpoint */
	err = frr_rt_barrier(rt, "the barrier before the threads' connections");
	if (err)
		return err;
	/* every rank has as many (its options are this rank's) */
	rt->nlane_in = (rt->P - 1) * rt->nlanes;
	rt->lane_in = calloc((size_t)rt->nlane_in, sizeof(*rt->lane_in));
	if (!rt->lane_in)
		return -ENOMEM;
	err = pthread_create(&th, NULL, lanes_accept, &a);
	if (err)
		return frr_rt_fail(rt, -err, "starting a thread: %s",
				   strerror(err));
	for (int t = 0; t < rt->nlanes && !err; t++)
		err = lane_connect(rt, t, all, ilen);
	/* every rank's lanes are connected, or one failed and left: then
	 * this barrier fails at once and the wait for its lanes stops */
	if (!err)
		err = frr_rt_barrier(rt, "the barrier after the threads' "
					 "connections");
	if (err)
		atomic_store(&a.stop, 1);
	pthread_join(th, NULL);
	if (!err)
		err = a.err;
	if (!err)
		frr_info("rank %d: its %d worker threads send on %d lane%s; "
			 "%d lanes of the other ranks connected to it",
			 rt->rank, rt->T, rt->nlanes,
			 rt->nlanes == 1 ? "" : "s", rt->nlane_in);
	return err ? err : lanes_share(rt);
}

/* Where thread t posts its progress words (core/ctl.c): its lane, or
 * without lanes the rank's shared context under tp_lock. */
static int prog_lanes(struct frr_rt *rt)
{
	if (rt->T < 1)
		return -EINVAL;
	rt->prog_lane = calloc((size_t)rt->T, sizeof(*rt->prog_lane));
	if (!rt->prog_lane)
		return -ENOMEM;
	for (int t = 0; t < rt->T; t++) {
		const struct frr_sender *dp = &rt->ws->wk[t].dp;

		rt->prog_lane[t] =
		    dp->lane_ep
			? (struct frr_prog_lane){ .ep = dp->lane_ep,
						  .ctl = dp->lane_ctl,
						  .lock = dp->lane_lock }
			: (struct frr_prog_lane){ .ep = rt->eps,
						  .ctl = rt->rctl,
						  .lock = &rt->tp_lock };
	}
	return 0;
}

int frr_rt_lanes_flush(struct frr_rt *rt, int timeout_ms)
{
	int err = 0;

	for (int t = 0; t < rt->nlanes && !err; t++)
		for (int r = 0; r < rt->P && !err; r++)
			if (r != rt->rank)
				err = frr_rt_tp_check(
				    rt,
				    frr_tp_flush(rt->ws->wk[t].dp.lane_ep[r],
						 timeout_ms),
				    r, "flushing a thread's writes");
	return err;
}

static void lanes_close(struct frr_rt *rt)
{
	free(rt->prog_lane);
	rt->prog_lane = NULL;
	for (int t = 0; rt->ws->wk && t < rt->T; t++) {
		struct frr_worker *wk = &rt->ws->wk[t];

		if (wk->dp.stage)
			frr_tp_mr_free(wk->dp.stage);
		wk->dp.stage = NULL;
	}
	/* a shared lane is closed once, by the thread that opened it */
	for (int t = rt->nlanes; rt->ws->wk && t < rt->T; t++) {
		struct frr_sender *dp = &rt->ws->wk[t].dp;

		dp->lane = NULL;
		dp->lane_ep = NULL;
		dp->lane_inbox = NULL;
		dp->lane_ctl = NULL;
		dp->lane_lock = NULL;
	}
	for (int t = 0; rt->ws->wk && t < rt->T; t++) {
		struct frr_worker *wk = &rt->ws->wk[t];

		for (int r = 0; wk->dp.lane_ep && r < rt->P; r++) {
			if (wk->dp.lane_inbox[r])
				frr_tp_rmr_release(wk->dp.lane_inbox[r]);
			if (wk->dp.lane_ctl[r])
				frr_tp_rmr_release(wk->dp.lane_ctl[r]);
			if (wk->dp.lane_ep[r])
				frr_tp_ep_close(wk->dp.lane_ep[r]);
		}
		if (wk->dp.lane)
			frr_tp_close(wk->dp.lane);
		wk->dp.lane = NULL;
		free(wk->dp.lane_ep);
		free(wk->dp.lane_inbox);
		free(wk->dp.lane_ctl);
		wk->dp.lane_ep = NULL;
		wk->dp.lane_inbox = NULL;
		wk->dp.lane_ctl = NULL;
	}
	for (int i = 0; i < rt->nlane_in; i++)
		if (rt->lane_in[i])
			frr_tp_ep_close(rt->lane_in[i]);
	free(rt->lane_in);
	rt->lane_in = NULL;
	rt->nlane_in = 0;
	for (int l = 0; rt->lane_locks && l < rt->nlanes; l++)
		pthread_mutex_destroy(&rt->lane_locks[l]);
	free(rt->lane_locks);
	rt->lane_locks = NULL;
	rt->nlanes = 0;
}

int frr_rt_tp_setup(struct frr_rt *rt)
{
	struct frr_tp_config cfg = tp_config(rt);
	size_t ilen = rank_info_len(rt);
	struct rank_info *mine = NULL;
	uint8_t *all = NULL;
	int err;

	/* the peers' lanes are endpoints of this ctx too */
	if (frr_rt_lanes_wanted(rt))
		cfg.max_eps = (rt->P - 1) * (1 + rt->T) + 3;
	err = frr_tp_open(&cfg, &rt->tp);
	if (err)
		return err;
	rt->eps = calloc((size_t)rt->P, sizeof(*rt->eps));
	rt->rctl = calloc((size_t)rt->P, sizeof(*rt->rctl));
	rt->tb->rinbox = calloc((size_t)rt->P, sizeof(*rt->tb->rinbox));
	rt->tb->rrepl = calloc((size_t)rt->P, sizeof(*rt->tb->rrepl));
	mine = calloc(1, ilen);
	all = calloc((size_t)rt->P, ilen);
	if (!rt->eps || !rt->rctl || !rt->tb->rinbox || !rt->tb->rrepl ||
	    !mine || !all) {
		err = -ENOMEM;
		goto out;
	}
	err = regions_alloc(rt, mine);
	if (err)
		goto out;
	err = frr_rt_allgather(rt, "exchanging transport addresses", mine, ilen,
			       all);
	if (err)
		goto out;
	err = peers_connect(rt, all, ilen);
	if (!err)
		err = lanes_setup(rt, all, ilen);
	if (!err)
		err = prog_lanes(rt);
out:
	free(mine);
	free(all);
	return err;
}

void frr_rt_tp_teardown(struct frr_rt *rt)
{
	for (int i = 0; rt->ws->rstate && i < rt->W * rt->P; i++)
		if (rt->ws->rstate[i])
			frr_tp_rmr_release(rt->ws->rstate[i]);
	for (int v = 0; rt->ws->state_mr && v < rt->W; v++)
		if (rt->ws->state_mr[v]) {
			frr_tp_mr_free(rt->ws->state_mr[v]);
			rt->ws->parts[v].state = NULL;
		}
	free(rt->ws->rstate);
	free(rt->ws->state_mr);
	for (int r = 0; rt->eps && r < rt->P; r++) {
		if (rt->rctl[r])
			frr_tp_rmr_release(rt->rctl[r]);
		if (rt->tb->rinbox[r])
			frr_tp_rmr_release(rt->tb->rinbox[r]);
		if (rt->tb->rrepl[r])
			frr_tp_rmr_release(rt->tb->rrepl[r]);
		if (rt->eps[r])
			frr_tp_ep_close(rt->eps[r]);
	}
	lanes_close(rt);
	if (rt->ctl)
		frr_tp_mr_free(rt->ctl);
	if (rt->tb->inbox)
		frr_tp_mr_free(rt->tb->inbox);
	if (rt->tb->repl)
		frr_tp_mr_free(rt->tb->repl);
	if (rt->tp)
		frr_tp_close(rt->tp);
	free(rt->eps);
	free(rt->rctl);
	free(rt->tb->rinbox);
	free(rt->tb->rrepl);
}

/* A transport call that fails on the data path means a peer is gone. */