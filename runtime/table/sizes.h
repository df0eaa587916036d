/* SPDX-License-Identifier: MIT */
/*
 * How big the runtime's update batches are, as plain arithmetic: the
 * inbox budget and chunk bounds, a slot's payload capacity, how many rows
 * of a segment fit in what is left of a chunk.  The runtime (job/setup.c,
 * table/batch.c) and the simulator (sim/sim_model.c) both size batches
 * with these, so a simulated batch is the size of a real one (one copy of
 * each rule).  Numbers only: no struct frr_rt, nothing of core.h.
 */
#ifndef FLEXRR_RUNTIME_TABLE_SIZES_H
#define FLEXRR_RUNTIME_TABLE_SIZES_H

#include <stdint.h>

#define FRR_RT_INBOX_SLOTS 4 /* inbox slots per sender worker */
/* a rank's inbox: about this many bytes (chunks of CHUNK_MIN..MAX) */
#define FRR_RT_INBOX_BUDGET ((uint64_t)256 << 20)
#define FRR_RT_CHUNK_MIN ((uint64_t)16 << 10)
#define FRR_RT_CHUNK_MAX ((uint64_t)1 << 20)
#define FRR_SLOT_HDR 64 /* inbox slot header (struct frr_slot_hdr) */
#define FRR_SEG_HDR 24	/* segment header (struct frr_seg, table.h) */

/*
 * Payload capacity of one inbox slot to a rank (job/setup.c
 * frr_rt_chunk_cap): `whole` (the rank's shard of every table as one
 * dense range) when that is smaller, else FRR_RT_INBOX_BUDGET / (W x
 * slots) clamped to CHUNK_MIN..MAX and at least `one` (one sparse row of
 * the widest table).
 */
static inline uint64_t frr_chunk_cap(uint64_t whole, uint64_t W, uint64_t one)
{
	uint64_t chunk = FRR_RT_INBOX_BUDGET / (W * FRR_RT_INBOX_SLOTS);

	if (chunk > FRR_RT_CHUNK_MAX)
		chunk = FRR_RT_CHUNK_MAX;
	if (chunk < FRR_RT_CHUNK_MIN)
		chunk = FRR_RT_CHUNK_MIN;
	if (chunk < one)
		chunk = one;
	return whole < chunk ? whole : chunk;
}

/* A slot's bytes (header + payload), 64-byte aligned. */
static inline uint64_t frr_slot_bytes(uint64_t cap)
{
	return (FRR_SLOT_HDR + cap + 63) & ~(uint64_t)63;
}

/* Rows of a segment of cols floats (sparse: plus an 8-byte id each) that
 * fit in `room` bytes of a chunk, header and padding included. */
static inline uint64_t frr_seg_fit(uint64_t room, int sparse, uint32_t cols)
{
	uint64_t rb = cols * (uint64_t)sizeof(float) + (sparse ? 8 : 0);

	return room >= FRR_SEG_HDR + 7 + rb ? (room - FRR_SEG_HDR - 7) / rb : 0;
}

/* The i-th shard (0 <= i < P) a batch of rank r goes to: the next ranks
 * first and its own last, so the ranks' batches do not all start at shard
 * 0 and queue behind each other there (incast; the simulator's part (d)
 * found it).  The order of the sends changes no result: a shard applies
 * in the partitions' order, not the arrivals' (table/shard.c). */
static inline int frr_batch_dest(int r, int P, int i)
{
	return (r + 1 + i) % P;
}

#endif /* FLEXRR_RUNTIME_TABLE_SIZES_H */
