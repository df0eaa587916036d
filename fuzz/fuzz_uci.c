// SPDX-License-Identifier: MIT
/* lda UCI bag-of-words: DOCWORD [FUZZ_SEP VOCAB]. */
#include "fuzz.h"
#include "lda/lda_corpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	const uint8_t *v;
	size_t dn, vn;
	struct lda_corpus c;
	int has_vocab = fuzz_split(data, n, &dn, &v, &vn);
	const char *dw = fuzz_file(0, data, dn);

	if (lda_load_uci(dw, has_vocab ? fuzz_file(1, v, vn) : NULL, &c))
		return 0;
	FUZZ_CHECK(c.ndocs > 0 && c.ndocs <= LDA_MAX_DOCS);
	FUZZ_CHECK(c.nwords > 0 && c.nwords <= LDA_MAX_WORDS);
	FUZZ_CHECK(c.ntokens <= LDA_MAX_TOKENS);
	FUZZ_CHECK(c.doc[0] == 0 && c.doc[c.ndocs] == c.ntokens);
	for (uint64_t d = 0; d < c.ndocs; d++)
		FUZZ_CHECK(c.doc[d] <= c.doc[d + 1]);
	for (uint64_t i = 0; i < c.ntokens; i++)
		FUZZ_CHECK(c.word[i] < c.nwords);
	for (uint32_t w = 0; has_vocab && w < c.nwords; w++)
		FUZZ_CHECK(c.vocab[w] != NULL);
	lda_corpus_free(&c);
	return 0;
}
