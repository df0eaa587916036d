/* SPDX-License-Identifier: MIT */
/*
 * The staleness bound, on ssp/'s floor (docs/architecture.md "Inside
 * runtime/"): the run options (launch/, through rt.h) and the simulator
 * (sim/, its own target, which does not see rt.h) check a slack against it.
 */
#ifndef FLEXRR_RUNTIME_SSP_H
#define FLEXRR_RUNTIME_SSP_H

#define FRR_RT_MAX_SLACK 24 /* the largest slack a job or simulation takes */

#endif /* FLEXRR_RUNTIME_SSP_H */
