// SPDX-License-Identifier: MIT
/* shm control messages (transport/shm/shm_msg.c): what a rank's service
 * thread and a connector read from a UNIX socket another process wrote.  An
 * accepted message has a known type and ended strings. */
#include "fuzz.h"
#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct shm_msg m;

	if (shm_msg_parse(data, n, &m))
		return 0;
	FUZZ_CHECK(n == sizeof(m) && m.magic == SHM_MSG_MAGIC);
	FUZZ_CHECK(m.type >= SHM_HELLO && m.type < SHM_MSG_TYPES);
	FUZZ_CHECK(strlen(m.addr) < sizeof(m.addr));
	FUZZ_CHECK(strlen(m.why) < sizeof(m.why));
	return 0;
}
