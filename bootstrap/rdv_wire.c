// SPDX-License-Identifier: MIT
/*
 * TCP rendezvous messages (rdv.h): judging what arrived, and the MACs of the
 * challenge-response.  Bytes from the network are copied once and only the
 * copy is judged and used.
 */
#include <string.h>

#include <openssl/crypto.h>

#include "rdv.h"

const char *const rdv_status_str[RDV_NSTATUS] = {
	"ok",
	"wrong job secret",
	"a different flexrr binary than rank 0's",
	"different run arguments than rank 0's",
	"a different job size than rank 0's",
	"a rank that is out of range or already taken",
};

const char *const rdv_verdict_str[] = {
	[RDV_MSG_OK] = "ok",
	[RDV_MSG_GARBAGE] = "garbage (not a flexrr rendezvous message)",
	[RDV_MSG_VERSION] = "another flexrr rendezvous protocol version",
	[RDV_MSG_OVERSIZED] = "an oversized message",
	[RDV_MSG_SHORT] = "a truncated message",
	[RDV_MSG_TYPE] = "a message out of turn",
};

/* the MACs' params: what each side claims, bound to both nonces */
struct rdv_params {
	int32_t rank;
	int32_t size;
	uint64_t binhash;
	uint64_t argshash;
};

static const struct frr_job_secret pairing_key; /* all zero, well known */

const struct frr_job_secret *rdv_key(const struct frr_tcp_cfg *cfg)
{
	return cfg->secret ? cfg->secret : &pairing_key;
}

enum rdv_verdict rdv_check_hdr(const void *buf, size_t n)
{
	struct rdv_msg h;

	if (n < RDV_HDR_LEN)
		return RDV_MSG_SHORT;
	memcpy(&h, buf, RDV_HDR_LEN);
	if (h.magic != RDV_MAGIC)
		return RDV_MSG_GARBAGE;
	if (h.version != RDV_VERSION)
		return RDV_MSG_VERSION;
	if (h.len > sizeof(struct rdv_msg))
		return RDV_MSG_OVERSIZED;
	if (h.len < sizeof(struct rdv_msg))
		return RDV_MSG_SHORT;
	return RDV_MSG_OK;
}

enum rdv_verdict rdv_parse(const void *buf, size_t n, uint16_t type,
			   struct rdv_msg *out)
{
	enum rdv_verdict v = rdv_check_hdr(buf, n);
	struct rdv_msg m;

	if (v != RDV_MSG_OK)
		return v;
	if (n > sizeof(m))
		return RDV_MSG_OVERSIZED;
	if (n < sizeof(m))
		return RDV_MSG_SHORT;
	memcpy(&m, buf, sizeof(m));
	if (m.type != type)
		return RDV_MSG_TYPE;
	if (m.status < 0 || m.status >= RDV_NSTATUS)
		return RDV_MSG_GARBAGE;
	*out = m;
	return RDV_MSG_OK;
}

void rdv_msg_init(struct rdv_msg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = RDV_MAGIC;
	m->version = RDV_VERSION;
	m->type = type;
	m->len = sizeof(*m);
}

static struct rdv_params params_of(const struct rdv_msg *h, int hashes)
{
	struct rdv_params p;

	memset(&p, 0, sizeof(p)); /* no padding bytes of the stack */
	p.rank = h->rank;
	p.size = h->size;
	if (hashes) {
		p.binhash = h->binhash;
		p.argshash = h->argshash;
	}
	return p;
}

void rdv_mac_rank0(const struct frr_job_secret *s, const struct rdv_msg *h,
		   const unsigned char n0[FRR_AUTH_NONCE_LEN],
		   unsigned char mac[FRR_AUTH_MAC_LEN])
{
	struct rdv_params p = params_of(h, 0);

	frr_auth_mac(s, "flexrr rdv rank0", h->nonce, n0, &p, sizeof(p), mac);
}

void rdv_mac_joiner(const struct frr_job_secret *s, const struct rdv_msg *h,
		    const unsigned char n0[FRR_AUTH_NONCE_LEN],
		    unsigned char mac[FRR_AUTH_MAC_LEN])
{
	struct rdv_params p = params_of(h, 1);

	frr_auth_mac(s, "flexrr rdv joiner", h->nonce, n0, &p, sizeof(p), mac);
}

int rdv_mac_ok(const unsigned char a[FRR_AUTH_MAC_LEN],
	       const unsigned char b[FRR_AUTH_MAC_LEN])
{
	return !CRYPTO_memcmp(a, b, FRR_AUTH_MAC_LEN);
}
