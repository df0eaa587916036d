// SPDX-License-Identifier: MIT
/* lda plain text (documents separated by blank lines): byte 0 picks the
 * cuts, then TEXT [FUZZ_SEP STOPWORDS]. */
#include <string.h>

#include "fuzz.h"
#include "lda/lda_corpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct lda_text_opts o;
	struct lda_corpus c;
	const uint8_t *stop;
	size_t tn, sn;

	if (!n)
		return 0;
	lda_text_opts_default(&o);
	o.min_count = 1 + (data[0] & 3);
	o.min_length = 1 + ((data[0] >> 2) & 3);
	o.builtin_stop = (data[0] >> 4) & 1;
	o.max_doc_frac = data[0] & 0x20 ? 0.5 : 1.0;
	if (fuzz_split(data + 1, n - 1, &tn, &stop, &sn))
		o.stopfile = fuzz_file(1, stop, sn);
	if (lda_load_text(fuzz_file(0, data + 1, tn), &o, &c))
		return 0;
	FUZZ_CHECK(c.ndocs > 0 && c.nwords > 0);
	FUZZ_CHECK(c.doc[0] == 0 && c.doc[c.ndocs] == c.ntokens);
	for (uint64_t d = 0; d < c.ndocs; d++)
		FUZZ_CHECK(c.doc[d] <= c.doc[d + 1]);
	for (uint64_t i = 0; i < c.ntokens; i++)
		FUZZ_CHECK(c.word[i] < c.nwords);
	for (uint32_t w = 0; w < c.nwords; w++)
		FUZZ_CHECK(c.vocab[w] && strlen(c.vocab[w]) >= o.min_length);
	lda_corpus_free(&c);
	return 0;
}
