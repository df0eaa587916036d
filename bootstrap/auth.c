// SPDX-License-Identifier: MIT
/*
 * Job authentication: where the job secret comes from, and the HMAC-SHA256
 * challenge-response every layer uses to prove knowledge of it (TCP
 * rendezvous, shm connections, rdma_cm private data).
 *
 * The secret is 32 bytes that never leave the job's processes: drawn with
 * getrandom by a launcher that forks its ranks (frr_launch, the PMIx rank 0),
 * or taken from FLEXRR_JOB_TOKEN / FLEXRR_JOB_TOKEN_FILE (hashed with
 * SHA-256, so any long random string serves).  On the wire there are only
 * nonces and MACs: a MAC is HMAC(secret, role || nonce_a || nonce_b ||
 * params), the role naming the side and the protocol so that a MAC one side
 * sent can never be replayed as the other's.  The job tag (frr_oob
 * job_token) is a MAC too: public, it names the job in descriptors and
 * addresses without revealing the secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"

#define SECRET_MIN_CHARS 32
#define SECRET_MAX_CHARS 4096
#define AUTH_MAX_INPUT 512
#define TOKEN_HINT                                                          \
	"export FLEXRR_JOB_TOKEN=$(openssl rand -hex 32) on the launching " \
	"host (srun passes it with --export=ALL, mpirun with -x "           \
	"FLEXRR_JOB_TOKEN), or write it to a file of mode 0600 and set "    \
	"FLEXRR_JOB_TOKEN_FILE"

int frr_job_secret_random(struct frr_job_secret *s)
{
	size_t got = 0;

	while (got < sizeof(s->b)) {
		ssize_t n = getrandom(s->b + got, sizeof(s->b) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			frr_err("getrandom: %s: cannot draw a job secret",
				strerror(errno));
			return err;
		}
		got += (size_t)n;
	}
	return 0;
}

int frr_job_secret_is_set(const struct frr_job_secret *s)
{
	unsigned char v = 0;

	for (size_t i = 0; i < sizeof(s->b); i++)
		v |= s->b[i];
	return v != 0;
}

/* The secret from a string: SHA-256 over a domain label and the string. */
static int secret_of_string(const char *what, const char *str, size_t len,
			    struct frr_job_secret *s)
{
	static const char label[] = "flexrr job secret v1";
	unsigned char buf[sizeof(label) + SECRET_MAX_CHARS];

	if (len < SECRET_MIN_CHARS || len > SECRET_MAX_CHARS) {
		frr_err("%s has %zu characters: a job secret needs %d to %d "
			"(random ones): %s",
			what, len, SECRET_MIN_CHARS, SECRET_MAX_CHARS,
			TOKEN_HINT);
		return -EINVAL;
	}
	memcpy(buf, label, sizeof(label));
	memcpy(buf + sizeof(label), str, len);
	SHA256(buf, sizeof(label) + len, s->b);
	OPENSSL_cleanse(buf, sizeof(buf));
	return 0;
}

/* Read a token file that only its owner (us) can read. */
static int secret_of_file(const char *path, struct frr_job_secret *s)
{
	char buf[SECRET_MAX_CHARS + 2];
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
		frr_err("FLEXRR_JOB_TOKEN_FILE=%s: cannot open: %s", path,
			strerror(errno));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		frr_err("FLEXRR_JOB_TOKEN_FILE=%s must be a regular file "
			"owned by uid %d and readable by nobody else: run "
			"'chmod 600 %s' (and chown it to yourself)",
			path, (int)geteuid(), path);
		err = -EACCES;
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		err = -errno;
		frr_err("FLEXRR_JOB_TOKEN_FILE=%s: read: %s", path,
			strerror(errno));
		goto out;
	}
	while (n > 0 &&
	       (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	err = secret_of_string("FLEXRR_JOB_TOKEN_FILE", buf, (size_t)n, s);
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	close(fd);
	return err;
}

int frr_job_secret_from_env(struct frr_job_secret *s)
{
	const char *tok = getenv("FLEXRR_JOB_TOKEN");
	const char *file = getenv("FLEXRR_JOB_TOKEN_FILE");
	int err;

	if (tok && file) {
		frr_err("both FLEXRR_JOB_TOKEN and FLEXRR_JOB_TOKEN_FILE are "
			"set: keep one");
		return -EINVAL;
	}
	if (file)
		err = secret_of_file(file, s);
	else if (tok)
		err = secret_of_string("FLEXRR_JOB_TOKEN", tok, strlen(tok), s);
	else
		return 0;
	return err ? err : 1;
}

int frr_job_secret_require(struct frr_job_secret *s, int rank)
{
	int got = frr_job_secret_from_env(s);

	if (got == 0) {
		frr_err("rank %d: no job secret: every rank of a job started "
			"by a launcher needs the same one, which only the "
			"job's ranks know: %s",
			rank, TOKEN_HINT);
		return -EACCES;
	}
	return got < 0 ? got : 0;
}

int frr_auth_nonce(unsigned char nonce[FRR_AUTH_NONCE_LEN])
{
	struct frr_job_secret r;
	int err = frr_job_secret_random(&r);

	if (!err)
		memcpy(nonce, r.b, FRR_AUTH_NONCE_LEN);
	return err;
}

void frr_auth_mac(const struct frr_job_secret *s, const char *role,
		  const unsigned char na[FRR_AUTH_NONCE_LEN],
		  const unsigned char nb[FRR_AUTH_NONCE_LEN],
		  const void *params, size_t plen,
		  unsigned char mac[FRR_AUTH_MAC_LEN])
{
	unsigned char in[AUTH_MAX_INPUT];
	size_t rl = strlen(role) + 1, n = 0;
	unsigned int ml = FRR_AUTH_MAC_LEN;

	/* callers pass fixed small structs: a longer input is a bug, and
	 * gets a MAC that matches nothing */
	if (rl + 2 * FRR_AUTH_NONCE_LEN + plen > sizeof(in)) {
		memset(mac, 0, FRR_AUTH_MAC_LEN);
		return;
	}
	memcpy(in, role, rl);
	n += rl;
	memcpy(in + n, na, FRR_AUTH_NONCE_LEN);
	n += FRR_AUTH_NONCE_LEN;
	memcpy(in + n, nb, FRR_AUTH_NONCE_LEN);
	n += FRR_AUTH_NONCE_LEN;
	if (plen)
		memcpy(in + n, params, plen);
	n += plen;
	if (!HMAC(EVP_sha256(), s->b, (int)sizeof(s->b), in, n, mac, &ml))
		memset(mac, 0, FRR_AUTH_MAC_LEN); /* never matches a real one */
}

int frr_auth_verify(const struct frr_job_secret *s, const char *role,
		    const unsigned char na[FRR_AUTH_NONCE_LEN],
		    const unsigned char nb[FRR_AUTH_NONCE_LEN],
		    const void *params, size_t plen, const unsigned char *mac,
		    size_t mac_len)
{
	unsigned char want[FRR_AUTH_MAC_LEN];
	int ok;

	if (mac_len < 16 || mac_len > FRR_AUTH_MAC_LEN)
		return 0;
	frr_auth_mac(s, role, na, nb, params, plen, want);
	ok = !CRYPTO_memcmp(want, mac, mac_len);
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

uint64_t frr_job_secret_tag(const struct frr_job_secret *s)
{
	static const unsigned char zero[FRR_AUTH_NONCE_LEN];
	unsigned char mac[FRR_AUTH_MAC_LEN];
	uint64_t t;

	frr_auth_mac(s, "flexrr job tag", zero, zero, NULL, 0, mac);
	memcpy(&t, mac, sizeof(t));
	return t | 1; /* never 0: 0 means "no job" */
}
