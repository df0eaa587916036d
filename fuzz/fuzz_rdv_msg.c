// SPDX-License-Identifier: MIT
/* TCP rendezvous messages (bootstrap/rdv_wire.c): what rank 0 and a joiner
 * read from the network.  Every input is judged as a header and as each
 * message type; an accepted one is well formed, and rank 0's proof over an
 * accepted hello is made and checked like at run time. */
#include "fuzz.h"
#include "rdv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const struct frr_job_secret key = { { 1, 2, 3 } };
	unsigned char n0[FRR_AUTH_NONCE_LEN] = { 0 }, mac[FRR_AUTH_MAC_LEN];
	struct rdv_msg m;

	if (n >= RDV_HDR_LEN) {
		enum rdv_verdict v = rdv_check_hdr(data, n);

		FUZZ_CHECK(v >= RDV_MSG_OK && v <= RDV_MSG_TYPE);
	}
	for (uint16_t t = RDV_HELLO; t <= RDV_VERDICT; t++) {
		if (rdv_parse(data, n, t, &m) != RDV_MSG_OK)
			continue;
		FUZZ_CHECK(n == sizeof(m) && m.magic == RDV_MAGIC &&
			   m.version == RDV_VERSION && m.type == t &&
			   m.len == sizeof(m));
		FUZZ_CHECK(m.status >= 0 && m.status < RDV_NSTATUS);
		FUZZ_CHECK(rdv_status_str[m.status] != NULL);
		if (t != RDV_HELLO)
			continue;
		rdv_mac_rank0(&key, &m, n0, mac);
		FUZZ_CHECK(rdv_mac_ok(mac, mac));
		FUZZ_CHECK(!rdv_mac_ok(mac, m.mac) ||
			   !memcmp(mac, m.mac, sizeof(mac)));
	}
	return 0;
}
