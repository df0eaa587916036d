/* SPDX-License-Identifier: MIT */
/*
 * Symbol visibility of libflexrr.  The library is built with
 * -fvisibility=hidden: only what the public headers declare between
 * FRR_API_BEGIN and FRR_API_END is exported from the shared object, so the
 * internals of one layer cannot become another program's dependency.
 */
#ifndef FLEXRR_EXPORT_H
#define FLEXRR_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define FRR_API_BEGIN _Pragma("GCC visibility push(default)")
#define FRR_API_END _Pragma("GCC visibility pop")
#else
#define FRR_API_BEGIN
#define FRR_API_END
#endif

#endif /* FLEXRR_EXPORT_H */
