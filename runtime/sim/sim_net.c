// SPDX-License-Identifier: MIT
/*
 * The processes' NICs (docs/simulator.md "Network"): one per process,
 * with send and receive bandwidth and a cost per message posted.  A
 * rank's threads post their batches on their own transport contexts
 * (job/setup.c lanes) but share the process's one NIC, so its sends queue
 * FIFO behind each other, a flush holding the NIC for its round trip.  A
 * receiver takes bytes at its receive bandwidth, so many senders into one
 * process (a shard's batches, a push to a standby) queue there too.  Sizes come
 * from the table model (sim_model.c).  With the link off (`--link none`) none
 * of this runs and the latency-only costs of before apply unchanged; bytes are
 * still counted when a table model is given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "sizes.h"

/* Nominal line rates; per-message costs are estimates (docs/simulator.md
 * "Link presets" has the sources).  Latencies are --net's. */
static const struct {
	const char *name;
	double gbps, msg_us, lat_us;
} links[] = {
	{ "hdr", 200, 0.1, 1.0 },     /* InfiniBand HDR, --net ib's latency */
	{ "100gbe", 100, 0.15, 2.0 }, /* RoCE, --net roce's */
	{ "25gbe", 25, 0.2, 2.0 },
	/* rxe in this project's VM: ib_write_bw 64 KiB 55.65 MB/s (pinned),
	 * ib_write_lat 21-26 us (docs/softroce.md) */
	{ "softroce", 55.65e6 * 8 / 1e9, 5.0, 25.0 },
};

int frr_sim_link_preset(const char *name, struct frr_sim_link *l, double *lat_s)
{
	if (!strcmp(name, "none")) {
		*l = (struct frr_sim_link){ 0 };
		return 0;
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (!strcmp(name, links[i].name)) {
			double Bps = links[i].gbps * 1e9 / 8;

			*l = (struct frr_sim_link){
				.on = 1,
				.tx_Bps = Bps,
				.rx_Bps = Bps,
				.msg_s = links[i].msg_us * 1e-6,
			};
			*lat_s = links[i].lat_us * 1e-6;
			return 0;
		}
	return -EINVAL;
}

int sim_net_init(struct sim *s)
{
	int P = s->cfg->P;

	s->tx_free = calloc((size_t)P, sizeof(double));
	s->rx_free = calloc((size_t)P, sizeof(double));
	s->hb_next = malloc((size_t)P * sizeof(double));
	s->bsz = calloc((size_t)P, sizeof(*s->bsz));
	s->rx_acc = calloc((size_t)P, sizeof(double));
	s->lock_free = calloc((size_t)P, sizeof(double));
	s->in_B = calloc((size_t)P, sizeof(double));
	s->rk = calloc((size_t)P + 2 * RR_MAX_GROUP + 2, sizeof(int));
	s->wbsz = s->cfg->link.on
		      ? calloc((size_t)s->W * (size_t)P, sizeof(*s->wbsz))
		      : malloc(1);
	s->comm_w = calloc((size_t)s->cfg->clocks, sizeof(double));
	s->push_s = calloc((size_t)s->cfg->clocks, sizeof(double));
	if (!s->tx_free || !s->rx_free || !s->hb_next || !s->bsz ||
	    !s->comm_w || !s->push_s || !s->rx_acc || !s->lock_free ||
	    !s->in_B || !s->rk || !s->wbsz)
		return -ENOMEM;
	for (int p = 0; p < P; p++)
		s->hb_next[p] = 0.2;
	if (s->cfg->link.on || s->cfg->model.kind != FRR_SIM_MODEL_NONE)
		return sim_model_init(s);
	return 0;
}

void sim_net_fini(struct sim *s)
{
	sim_model_fini(s);
	free(s->tx_free);
	free(s->rx_free);
	free(s->hb_next);
	free(s->bsz);
	free(s->rx_acc);
	free(s->lock_free);
	free(s->in_B);
	free(s->rk);
	free(s->wbsz);
	free(s->comm_w);
	free(s->push_s);
}

/* The server's heartbeats due by t (job/health.c beat: a beat and three
 * aggregate words to every peer every 200 ms) take p's NIC first. */
static void heartbeats(struct sim *s, int p, double t)
{
	const struct frr_sim_link *l = &s->cfg->link;
	uint64_t n = 4 * (uint64_t)(s->cfg->P - 1);

	while (n && s->hb_next[p] <= t) {
		double b = s->hb_next[p] > s->tx_free[p] ? s->hb_next[p]
							 : s->tx_free[p];

		s->tx_free[p] =
		    b + (double)n *
			    (l->msg_s + (l->tx_Bps > 0 ? 8 / l->tx_Bps : 0));
		s->bytes[2] += 8 * n;
		s->msgs += n;
		s->hb_next[p] += 0.2;
	}
}

double sim_nic_send(struct sim *s, int p, int q, double t, uint64_t bytes,
		    uint64_t msgs, uint64_t flushes, double *arrive)
{
	const struct frr_sim_link *l = &s->cfg->link;
	double lat = s->cfg->lat_s, start, tx, rx, rx_end, end;

	heartbeats(s, p, t);
	start = t > s->tx_free[p] ? t : s->tx_free[p];
	tx = (double)msgs * l->msg_s +
	     (l->tx_Bps > 0 ? (double)bytes / l->tx_Bps : 0);
	rx = l->rx_Bps > 0 ? (double)bytes / l->rx_Bps : 0;
	/* cut-through: the receiver takes the bytes as they come, unless
	 * it is still taking others' */
	rx_end = start + tx;
	if (s->rx_free[q] + rx > rx_end)
		rx_end = s->rx_free[q] + rx;
	s->rx_free[q] = rx_end;
	/* each flush waits for its write's completion: a round trip */
	end = flushes ? rx_end + 2 * lat * (double)flushes : start + tx;
	if (arrive)
		*arrive = flushes ? end - lat : rx_end + lat;
	/* The runtime's worker threads post and flush on their own lanes
	 * (job/setup.c frr_rt_lanes_wanted), so a flush waits for its own
	 * writes only: the wire is busy while the bytes go out, not for the
	 * round trip.  In the dense plane of before issue 21 every send and
	 * its flush ran under the rank's one transport lock, which held the
	 * NIC until the flush returned. */
	s->tx_free[p] = s->cfg->dense_plane ? end : start + tx;
	return end;
}

/*
 * Control words.  The runtime posts a worker's progress words on its own
 * lane (core/ctl.c, since 2026-12-07) and engine messages on the rank's
 * shared transport context under tp_lock (rr/mailbox.c), which the server
 * holds while it posts a clock's push (table/push.c frr_rt_push_rows; on
 * verbs a post waits for send-queue room, so about until the push's bytes
 * are out).  A NIC serves its queue pairs in turn, so neither waits behind
 * the bulk bytes queued on the others; a locked one waits for the push to
 * be posted.  Before 2026-12-07 the runtime posted progress words under
 * tp_lock too (--ctl-shared), and the simulator queued every control word
 * FIFO behind every batch and push, its poster waiting for the whole
 * queue.  The dense plane sent everything under one lock: FIFO.
 */
double sim_ctl_send(struct sim *s, int p, int q, double t, uint64_t bytes,
		    uint64_t flushes, int locked, double *arrive)
{
	const struct frr_sim_link *l = &s->cfg->link;
	double lat = s->cfg->lat_s, posted;

	if (s->cfg->dense_plane)
		return sim_nic_send(s, p, q, t, bytes, 1, flushes, arrive);
	heartbeats(s, p, t);
	posted =
	    (!locked || t > s->lock_free[p] ? t : s->lock_free[p]) + l->msg_s;
	*arrive = posted + lat;
	return flushes ? posted + 2 * lat * (double)flushes : posted;
}

/* Post from p at t or once its NIC is free, without a receiver's queue:
 * returns when the bytes are out (the server's push, below). */
static double nic_post(struct sim *s, int p, double t, uint64_t bytes,
		       uint64_t msgs)
{
	const struct frr_sim_link *l = &s->cfg->link;
	double start;

	heartbeats(s, p, t);
	start = t > s->tx_free[p] ? t : s->tx_free[p];
	s->tx_free[p] = start + (double)msgs * l->msg_s +
			(l->tx_Bps > 0 ? (double)bytes / l->tx_Bps : 0);
	return s->tx_free[p];
}

static void add_comm(struct sim *s, const struct sim_worker *w, double t0)
{
	int c = w->clock;

	if (c >= 0 && c < s->cfg->clocks)
		s->comm_w[c] += s->now - t0;
}

void sim_batch_count(struct sim *s, int p, int v, const uint64_t (*rg)[2],
		     int nrg)
{
	if (!s->mdl)
		return;
	sim_model_batch(s, v, rg, nrg, s->bsz);
	if (v / s->cfg->T != p)
		sim_model_wake(s, p, v, s->bsz);
	for (int o = 0; o < s->cfg->P; o++)
		if (o != p) {
			s->bytes[0] += s->bsz[o].bytes;
			s->msgs += 2 * s->bsz[o].n;
		}
}

/* The worker's CPU before its batch goes out (its deltas and copies:
 * on shm they cost about as much as the memory wire itself), and the
 * bytes each shard will apply at the clock's close. */
static void flush_cpu(struct sim *s, int p, const struct sim_bsz *b)
{
	double by = 0;

	for (int o = 0; o < s->cfg->P; o++)
		if (o != p) {
			by += (double)b[o].bytes;
			s->in_B[o] += (double)b[o].bytes;
		}
	if (by > 0 && s->cfg->link.flush_s_B > 0)
		sim_sleep_until(s, s->now + by * s->cfg->link.flush_s_B);
}

void sim_flush(struct sim *s, struct sim_worker *w, int v,
	       const uint64_t (*rg)[2], int nrg)
{
	int p = w->rank, P = s->cfg->P;
	double t0 = s->now;
	/* its own copy: other workers size theirs while it waits */
	struct sim_bsz *b = s->wbsz + (size_t)w->w * (size_t)P;

	sim_batch_count(s, p, v, rg, nrg);
	if (!s->cfg->link.on) {
		sim_sleep_until(s, s->now + sim_flush_s(s));
		add_comm(s, w, t0);
		return;
	}
	/* the batch to every shard in turn (batch.c batch_send), each chunk
	 * a write, its seq word and a flush.  One shard at a time in virtual
	 * time: a receiver takes bytes in the order they come, so a send
	 * must not book it ahead of others' earlier sends (booking all
	 * shards at once put every worker's batch behind the whole of the
	 * previous one's: at 1,024 workers a convoy of P x the batch) */
	memcpy(b, s->bsz, (size_t)P * sizeof(*b));
	flush_cpu(s, p, b);
	for (int i = 0; i < P; i++) {
		/* the dense plane sent to shards 0 .. P - 1, every rank alike
		 */
		int o = s->cfg->dense_plane ? i : frr_batch_dest(p, P, i);

		if (o != p)
			sim_sleep_until(s, sim_nic_send(s, p, o, s->now,
							b[o].bytes, 2 * b[o].n,
							b[o].n, NULL));
	}
	add_comm(s, w, t0);
}

/* the ranks that read w's word (rr's helper group: its helpers, the
 * workers it may help), w's own excepted */
static int readers(const struct sim *s, const struct sim_worker *w, int *out)
{
	int n = 0, T = s->cfg->T;

	/* the dense plane wrote every word to every rank */
	for (int r = 0; s->cfg->dense_plane && r < s->cfg->P; r++)
		if (r != w->rank)
			out[n++] = r;
	if (s->cfg->dense_plane)
		return n;
	for (int i = 0; i < w->rw.nhelpers + w->rw.nhelpees; i++) {
		int v = i < w->rw.nhelpers ? w->rw.helpers[i]
					   : w->rw.helpees[i - w->rw.nhelpers];
		int r = v / T, k;

		for (k = 0; k < n && out[k] != r; k++)
			;
		if (r != w->rank && k == n)
			out[n++] = r;
	}
	return n;
}

double sim_progress_send(struct sim *s, struct sim_worker *w)
{
	int *rk = s->rk, n;
	double t0 = s->now, t = s->now, vis = s->now + s->cfg->lat_s, arr;

	if (!s->cfg->link.on || !s->reassign)
		return vis;
	n = readers(s, w, rk);
	for (int i = 0; i < n; i++) {
		t = sim_ctl_send(s, w->rank, rk[i], t, 8, 0, s->cfg->ctl_shared,
				 &arr);
		if (arr > vis)
			vis = arr;
		s->bytes[2] += 8;
		s->msgs++;
	}
	/* the worker posts them under the process's lock */
	if (t > s->now) {
		sim_sleep_until(s, t);
		add_comm(s, w, t0);
	}
	return vis;
}

/*
 * Every shard's server pushes at once, so the pushes are not booked one
 * shard after the other on the receivers' queues (a receiver would then
 * take shard 1's bytes only after all of shard 0's to every rank, a
 * convoy of P pushes): each server's sends follow each other on its own
 * NIC, and each receiver takes the sum of what all shards push to it at
 * its receive bandwidth, from the clock's close on (or once it is free).
 */
double sim_push_clock(struct sim *s, int c, double t)
{
	int P = s->cfg->P;
	const struct frr_sim_link *l = &s->cfg->link;
	double closed = t + (P > 1 ? s->cfg->lat_s : s->cfg->local_lat_s);
	double lat = s->cfg->lat_s;

	if (s->cfg->link.on)
		for (int r = 0; r < P; r++)
			s->rx_acc[r] = 0;
	for (int o = 0; o < P && s->mdl; o++) {
		double to = t, out = 0;

		for (int r = 0; r < P; r++) {
			struct sim_bsz b = sim_model_push(s, o, r);

			if (r == o)
				continue;
			/* rows, plus the pushing and done words */
			s->bytes[1] += b.bytes + 16;
			s->msgs += b.n + 2;
			out += (double)b.bytes;
		}
		/* the server's CPU: the batches' apply, the rows' packing */
		to += (s->in_B[o] + out) * l->apply_s_B;
		s->in_B[o] = 0;
		if (!s->cfg->link.on)
			continue;
		/* shard.c frr_rt_try_apply: "pushing" to every rank and a
		 * flush of each (a round trip, the lock held in the dense
		 * plane), the apply, the rows, "done" behind them */
		for (int r = 0; r < P; r++)
			if (r != o) {
				to = nic_post(s, o, to, 8, 1) + 2 * lat;
				if (s->cfg->dense_plane)
					s->tx_free[o] = to;
				s->rx_acc[r] += 8;
			}
		for (int r = 0; r < P; r++) {
			struct sim_bsz b = sim_model_push(s, o, r);

			if (r == o)
				continue;
			to = nic_post(s, o, to, b.bytes + 8, b.n + 1);
			if (to + lat > closed)
				closed = to + lat;
			s->rx_acc[r] += b.bytes + 8;
		}
		s->lock_free[o] = to;
	}
	for (int r = 0; s->cfg->link.on && r < P; r++) {
		double from = s->rx_free[r] > t ? s->rx_free[r] : t;

		s->rx_free[r] =
		    from + (l->rx_Bps > 0 ? s->rx_acc[r] / l->rx_Bps : 0);
		if (s->rx_free[r] + lat > closed)
			closed = s->rx_free[r] + lat;
	}
	if (s->cfg->link.on)
		s->push_s[c] = closed - t;
	sim_model_pushed(s);
	return closed;
}

void sim_state_ship(struct sim *s, struct sim_worker *w, int from, int to,
		    uint64_t items)
{
	uint64_t bytes = sim_model_state_bytes(s, items);
	double t0 = s->now;

	if (from == to || !bytes)
		return;
	s->bytes[3] += bytes;
	s->msgs++;
	if (!s->cfg->link.on)
		return; /* free, as before links */
	/* part.c state_ship: one write, flushed */
	sim_sleep_until(s,
			sim_nic_send(s, from, to, s->now, bytes, 1, 1, NULL));
	add_comm(s, w, t0);
}
