/* SPDX-License-Identifier: MIT */
/*
 * What the PageRank app (pagerank.c) and the sequential reference
 * (pagerank_ref.c) must agree on: the graph and the damping.  Nothing here
 * knows about flexrr's tables or clocks; it uses only flexrr/base.h (the
 * RNG) and flexrr/opt.h (the options' table entries).
 *
 * The graph: `vertices` vertices; vertex u's out-degree is drawn from a
 * power law (Lomax, shape 2: mean about avg_degree, a few vertices with
 * hundreds of edges, about 1 / (avg_degree + 1) of them with none, the
 * dangling vertices).  An edge is local with probability `local`: to
 * u +- k (mod N), P(k > x) = 1 / x, as pages mostly link within their site
 * when ids follow a crawl; otherwise its target is floor(N * U^2), U
 * uniform, so low ids collect most long links (in-degrees follow a power
 * law too).  Vertex u's edges depend only on (graph_seed, u): any process
 * can make any part of the graph.
 */
#ifndef PR_H
#define PR_H

#include <stddef.h>
#include <stdint.h>

#include <flexrr/opt.h>

#define PR_MAX_VERTICES (1ull << 31)

struct pr_graph {
	uint64_t vertices;
	double avg_degree, local;
	uint64_t seed;
	double damping;
};

/* The graph's table entries for a struct whose member `field` is a
 * struct pr_graph: PR_GRAPH_OPTS(struct my_opts, g), then its own. */
#define PR_GRAPH_OPTS(type, field)                                             \
	FRR_OPT("vertices", 0, FRR_OPT_U64, offsetof(type, field.vertices), 2, \
		PR_MAX_VERTICES, .def.u = 20000, .arg = "N",                   \
		.help = "vertices of the graph", .group = "graph"),            \
	    FRR_OPT("avg-degree", 0, FRR_OPT_DOUBLE,                           \
		    offsetof(type, field.avg_degree), 0.5, 1000, .def.d = 8,   \
		    .arg = "D", .help = "mean out-degree (power law)"),        \
	    FRR_OPT("local", 0, FRR_OPT_DOUBLE, offsetof(type, field.local),   \
		    0, 1, .def.d = 0.8, .arg = "F",                            \
		    .help = "fraction of edges to nearby ids"),                \
	    FRR_OPT("graph-seed", 0, FRR_OPT_U64, offsetof(type, field.seed),  \
		    0, 0, .def.u = 1, .arg = "S", .help = "the graph"),        \
	    FRR_OPT("damping", 0, FRR_OPT_DOUBLE,                              \
		    offsetof(type, field.damping), 0.01, 0.99, .def.d = 0.85,  \
		    .arg = "F", .help = "probability of following a link")

/* Out-degree of vertex u; pr_edges writes its targets to out[0..deg). */
uint32_t pr_degree(const struct pr_graph *g, uint64_t u);
void pr_edges(const struct pr_graph *g, uint64_t u, uint32_t deg,
	      uint32_t *out);

#endif
