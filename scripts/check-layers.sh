#!/usr/bin/env bash
# Checks the direction of dependency of every quoted #include in base/,
# bootstrap/, transport/, runtime/, apps/, cli/ and include/flexrr/
# (docs/architecture.md, "Checking the order").  Layers, bottom to top:
#
#   base <- bootstrap <- transport <- runtime <- apps <- cli
#
# A file may include headers of its own layer or of lower layers, and those
# of a lower layer only through include/flexrr/ (never its internal ones).
# Inside runtime/ its folders sit on floors, bottom to top (FLOORS below);
# a runtime file may include headers of its own floor or lower ones.
#
# Known violations are listed in scripts/layers-allow.txt, one per line:
#   from-file -> included-header  # why
# The check fails on a violation that is not listed, and on a listed one
# that no longer occurs (delete its line: the list only shrinks).
#
# usage: scripts/check-layers.sh [--allow FILE] [--list]
#   --allow FILE  allowlist to use (default scripts/layers-allow.txt)
#   --list        print every file's layer (and floor), then check
# Exit 0: clean; 1: violations or stale allowlist lines; 2: usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

allow=$root/scripts/layers-allow.txt list=0
while [ $# -gt 0 ]; do
	case $1 in
	--allow) [ $# -ge 2 ] || { echo "check-layers.sh: --allow needs a file" >&2; exit 2; }
		allow=$(realpath -m -- "$2"); shift ;; # from the caller's directory
	--list) list=1 ;;
	-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "check-layers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -f "$allow" ] || { echo "check-layers.sh: no allowlist '$allow'" >&2; exit 2; }
cd "$root"
allow=$(realpath --relative-to=. -- "$allow") # short names in messages

# Top-level layers, bottom to top.
LAYERS="base bootstrap transport runtime apps cli"
# Public headers: the layer each one declares (a new header must be added).
PUBLIC="
export.h  base       FRR_API_BEGIN/END, used by every public header
log.h     base
file.h    base
opt.h     base
base.h    base
bootstrap.h bootstrap
transport.h transport
flexrr.h  runtime    the app API (tables, items, evaluation)
job.h     runtime    program entry (frr_run_main, run options): runtime/launch/
sim.h     runtime    the simulator's study: runtime/sim/ implements it
"
# Floors of runtime/, bottom to top: folders (and public headers of the
# runtime) on one line share a floor.  core/ holds struct frr_rt (the
# parameters, the shape, the transport and control words, the failure
# state); each floor above keeps its own state in a struct of its own
# header (docs/architecture.md "Inside runtime/").
FLOORS="
api       include/flexrr/flexrr.h
core      core
straggler+trace  straggler trace
table     table
ssp       ssp
worker    worker
eval      eval
rr        rr
job       job
sim       sim include/flexrr/sim.h
launch    launch include/flexrr/job.h
"
# Where a quoted include is looked up after the including file's own
# folder, as the CMake targets set it (path prefix: folders, in order).
# runtime/: runtime/ itself and every folder below it holding a header
# (runtime/CMakeLists.txt), sim/ excepted: sim/ is its own target.
INCDIRS="
base/       include
bootstrap/  include
transport/  transport include
runtime/sim/ runtime/sim runtime/rr runtime/straggler runtime/trace runtime/core runtime/table runtime/worker include
runtime/    @runtime include
apps/       apps include
cli/        cli include
include/    include
"

files=$(find base bootstrap transport runtime apps cli include/flexrr \
	-type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
# every quoted include: file:line:text (grep -H: also with one file)
incs=$(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files || true)

LC_ALL=C awk -v LAYERS="$LAYERS" -v PUBLIC="$PUBLIC" -v FLOORS="$FLOORS" \
	-v INCDIRS="$INCDIRS" -v ALLOW="$allow" -v LIST="$list" -v FILES="$files" '
function norm(p,   n, a, out, k, i) {
	n = split(p, a, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "" || a[i] == ".") continue
		if (a[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
		out[++k] = a[i]
	}
	p = ""
	for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
	return p
}
function dirof(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
function layer(f,   top, h) {
	if (f ~ /^include\/flexrr\//) {
		h = f; sub(/^include\/flexrr\//, "", h)
		return (h in publ) ? publ[h] : ""
	}
	top = f; sub(/\/.*/, "", top)
	return (top in lrank) ? top : ""
}
# floor index of a runtime file or runtime public header; -1 when undeclared
function floor(f,   d) {
	if (f in fmember) return fmember[f]
	if (f !~ /^runtime\/[^\/]+\//) return -1
	d = f; sub(/^runtime\//, "", d); sub(/\/.*/, "", d)
	return (d in fmember) ? fmember[d] : -1
}
function search_dirs(f,   best, p) {
	best = ""
	for (p in incd)
		if (index(f, p) == 1 && length(p) > length(best)) best = p
	return best == "" ? "" : incd[best]
}
function bad(where, msg, fix,   p) {
	nbad++
	split(where, p, ":") # sorted by file, then line as a number
	skey[nbad] = p[1] "\001" sprintf("%09d", p[2] + 0)
	out[nbad] = where ": " msg "\n    fix: " fix
}
BEGIN {
	nl = split(LAYERS, L, " ")
	for (i = 1; i <= nl; i++) lrank[L[i]] = i
	n = split(PUBLIC, lines, "\n")
	for (i = 1; i <= n; i++)
		if (split(lines[i], w, " ") >= 2) publ[w[1]] = w[2]
	n = split(FLOORS, lines, "\n"); nf = 0
	for (i = 1; i <= n; i++) {
		m = split(lines[i], w, " ")
		if (m < 2) continue
		fname[++nf] = w[1]
		for (j = 2; j <= m; j++)
			fmember[w[j] ~ /\.h$/ && w[j] !~ /\// ? "runtime/" w[j] : w[j]] = nf
	}
	n = split(FILES, fl, "\n")
	for (i = 1; i <= n; i++) if (fl[i] != "") exists[fl[i]] = 1
	# runtime/ include dirs: runtime/ and every folder holding a header,
	# sorted as CMake lists them, runtime/sim/ left out (its own target)
	rtdirs = "runtime"
	for (i = 1; i <= n; i++)
		if (fl[i] ~ /^runtime\/.*\.h$/) {
			d = dirof(fl[i])
			if (d != "runtime" && d != "runtime/sim" && !(d in seen)) {
				seen[d] = 1; rtdirs = rtdirs " " d
			}
		}
	n = split(INCDIRS, lines, "\n")
	for (i = 1; i <= n; i++) {
		m = split(lines[i], w, " ")
		if (m < 2) continue
		s = ""
		for (j = 2; j <= m; j++) s = s " " (w[j] == "@runtime" ? rtdirs : w[j])
		incd[w[1]] = s
	}
	# every scanned file needs a layer, and a runtime file a floor
	for (f in exists) {
		if (layer(f) == "")
			bad(f, "belongs to no layer (a new public header?)",
			    "add it to PUBLIC in scripts/check-layers.sh, with the layer it declares")
		else if (f ~ /^runtime\// && floor(f) < 0)
			bad(f, "is in no floor of runtime/",
			    "add its folder to FLOORS in scripts/check-layers.sh (bottom to top)")
		if (LIST) {
			fl_ = floor(f)
			printf "%-44s %s%s\n", f, layer(f), (fl_ > 0 && layer(f) == "runtime") ? " / " fname[fl_] : "" | "LC_ALL=C sort"
		}
	}
	if (LIST) close("LC_ALL=C sort")
	# the allowlist
	nallow = 0
	while ((getline line < ALLOW) > 0) {
		ln++
		if (line ~ /^[[:space:]]*(#|$)/) continue
		why = line; key = line
		if (!sub(/^[^#]*#[[:space:]]*/, "", why) || why == "") why = ""
		sub(/[[:space:]]*#.*$/, "", key)
		if (split(key, w, " ") != 3 || w[2] != "->") {
			bad(ALLOW ":" ln, "cannot read \"" line "\"",
			    "write: from-file -> included-header  # why")
			continue
		}
		if (why == "")
			bad(ALLOW ":" ln, w[1] " -> " w[3] " has no why",
			    "add \"# why\" after it, one line")
		k = w[1] " -> " w[3]
		if (k in allowed)
			bad(ALLOW ":" ln, k " is listed twice", "delete one")
		allowed[k] = ln
	}
	close(ALLOW)
}
$0 == "" { next }
{
	# file:line:#include "x"
	f = $0; sub(/:.*/, "", f)
	rest = substr($0, length(f) + 2)
	ln = rest; sub(/:.*/, "", ln)
	text = substr(rest, length(ln) + 2)
	inc = text; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
	where = f ":" ln
	# as the compiler looks: the folder of the including file first, then -I in order
	h = norm(dirof(f) "/" inc)
	if (!(h in exists)) {
		h = ""; found = ""
		m = split(search_dirs(f), D, " ")
		for (j = 1; j <= m; j++) {
			c = norm(D[j] "/" inc)
			if (c in exists) {
				if (h == "") h = c
				else if (c != h) found = found " " c
			}
		}
		if (h == "") {
			bad(where, "#include \"" inc "\" is found in none of the folders the build searches",
			    "include a header of this tree by a path the target sees, or use <...> for a system header")
			next
		}
		if (found != "")
			bad(where, "#include \"" inc "\" is ambiguous: " h found,
			    "rename one of them or include it by a longer path")
	}
	lf = layer(f); lh = layer(h)
	if (lf == "" || lh == "") next # reported above
	k = f " -> " h
	why = ""
	if (lrank[lh] > lrank[lf])
		why = lf " includes " lh ", a higher layer (order: " LAYERS ")"
	else if (lrank[lh] < lrank[lf] && h !~ /^include\/flexrr\//)
		why = lf " reaches into " lh "/ internals"
	else if (lf == "runtime" && lh == "runtime" && floor(h) > floor(f) && floor(f) > 0)
		why = "runtime floor " fname[floor(f)] " includes floor " fname[floor(h)] ", a higher one"
	if (why == "") next
	if (k in allowed) { used[k] = 1; next }
	if (why ~ /internals$/)
		fix = "include " lh "/ only through its public headers (include/flexrr/)"
	else
		fix = "take what it needs from a header of " \
		      (why ~ /^runtime floor/ ? "floor " fname[floor(f)] : "layer " lf) \
		      " or lower (move it down if need be); an existing arrow being removed may be " \
		      "listed in " ALLOW " as \"" k "  # why\""
	bad(where, "#include \"" inc "\" (" h "): " why, fix)
}
END {
	for (k in allowed)
		if (!(k in used))
			bad(ALLOW ":" allowed[k], k " no longer occurs",
			    "delete this line: the allowlist only shrinks")
	if (nbad) {
		# by file and line (insertion sort: a handful of lines)
		for (i = 2; i <= nbad; i++) {
			v = out[i]; kv = skey[i]
			for (j = i - 1; j >= 1 && skey[j] > kv; j--) {
				out[j + 1] = out[j]; skey[j + 1] = skey[j]
			}
			out[j + 1] = v; skey[j + 1] = kv
		}
		for (i = 1; i <= nbad; i++) print out[i]
		printf "check-layers: %d problem(s); order and rules: docs/architecture.md (\"Checking the order\")\n", nbad
		exit 1
	}
	na = 0; for (k in used) na++
	printf "check-layers: ok (%d quoted includes, %d known violations listed in %s)\n", NR, na, ALLOW
}' <<<"$incs"
