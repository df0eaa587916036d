// SPDX-License-Identifier: MIT
/* Apps linked into flexrr.  Weak references: an app whose object is not
 * linked in simply does not appear (tests link only what they need). */
#include <string.h>

#include "flexrr/flexrr.h"

extern const struct frr_app_ops frr_app_toy __attribute__((weak));
extern const struct frr_app_ops frr_app_mf __attribute__((weak));
extern const struct frr_app_ops frr_app_mlr __attribute__((weak));
extern const struct frr_app_ops frr_app_lda __attribute__((weak));

const struct frr_app_ops *const *frr_app_list(void)
{
	static const struct frr_app_ops *list[5];
	static const struct frr_app_ops *const all[] = {
		&frr_app_toy,
		&frr_app_mf,
		&frr_app_mlr,
		&frr_app_lda,
	};
	size_t n = 0;

	/* rebuilt on each call: cheap, and no init-order or thread issues */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			list[n++] = all[i];
	list[n] = NULL;
	return list;
}

const struct frr_app_ops *frr_app_find(const char *name)
{
	for (const struct frr_app_ops *const *a = frr_app_list(); *a; a++)
		if (!strcmp((*a)->name, name))
			return *a;
	return NULL;
}
