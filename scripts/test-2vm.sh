#!/usr/bin/env bash
# test-2vm.sh BUILD_DIR - the two-host stage (scripts/test.sh runs it): two
# qemu VMs (scripts/softroce-vm.sh pair), each with its own soft-RoCE device
# on a virtual wire between them, run two-rank flexrr jobs, one rank per VM,
# started the way a launcher starts ranks (rank, size, rendezvous address and
# job secret in the environment), over --backend verbs:
#   bsp   BSP with a fixed seed prints the summary line that the same job
#         prints on shm on this host (all fields but time_s and backend);
#         2 threads a rank, each sending on its own QPs (its own lane)
#   rr    FlexRR with a persistent straggler on rank 0 (VM a): the metrics show
#         items of worker 0 done by worker 1 in VM b, and every item is done
#         exactly once (test_rr_job's counting app, launcher_started_rank_...)
#   mtu   VM b's netdev MTU differs (active MTU 4096 vs 1024): the job warns
#         naming both MTUs and still finishes
#   recover  --on-failure recover, rank 1 in VM b SIGKILLs itself at clock
#         3: rank 0 in VM a runs both ranks from the checkpoint the VMs share
#         and prints the bsp summary line
#   unshared  --checkpoint in each VM's own /tmp: both ranks refuse the job
#         at the start, rank 0 naming rank 1's host and what to give
#   kill  SIGKILL of rank 1 in VM b: rank 0 in VM a exits non-zero within
#         10 s, naming rank 1
# One boot of the pair (--smp 1 each); both VMs are stopped on any exit.
# Options: --smp N (1 vCPU per VM), --keep (keep the scratch dir), -h/--help.
set -euo pipefail
. "$(dirname "$0")/lib/vmtest.sh"
vt_name=test-2vm.sh smp=1 keep=0
vt_opt() {
	case $1 in
	--smp) smp=$2; vt_used=2 ;;
	--keep) keep=1 ;;
	*) return 1 ;;
	esac
}
vt_parse 21 "$@"
vt_check_build bin/flexrr tests/test_rr_job
vt_inside_root "the VMs"

t0=$SECONDS
vt_pair_scratch test-2vm
# the BSP job, on both sides
echo "--seed 5 --clocks 5 -q -t 2 toy --items 40" >"$scratch/bsp.args"
read -r -a bsp_args <"$scratch/bsp.args"
"$build/bin/flexrr" run -n 2 --backend shm "${bsp_args[@]}" >"$scratch/bsp.shm" ||
	{ echo "test-2vm.sh: the reference job on shm failed" >&2; exit 1; }

vt_pair_run --smp "$smp" --timeout 900 --share "$ROOT" \
	--libs-of "$build/bin/flexrr" --libs-of "$build/tests/test_rr_job" -- \
	"bash $ROOT/scripts/softroce/guest-pair.sh $build $scratch"

# ---- judge
fails=0 results=()
f() { cat "$scratch/$1" 2>/dev/null || echo "?"; }
summary() { { grep -m1 '^flexrr: done' "$1" 2>/dev/null || true; } | sed -E 's/ (time_s|backend)=[^ ]*//g'; }
verdict() { # name ok detail
	local t
	t=$(f "$1.a.time")
	if [ "$2" = 1 ]; then results+=("PASS  $1 ($t s): $3"); else
		results+=("FAIL  $1 ($t s): $3"); fails=$((fails + 1))
	fi
}
both_ok() { [ "$(f "$1.a.rc")" = 0 ] && [ "$(f "$1.b.rc")" = 0 ]; }

want=$(summary "$scratch/bsp.shm") got=$(summary "$scratch/bsp.a.out")
ok=0
both_ok bsp && [ -n "$want" ] && [ "$want" = "$got" ] && ok=1
verdict bsp $ok "exit a=$(f bsp.a.rc) b=$(f bsp.b.rc); shm: '$want'; verbs: '${got:-none}'"

got=$(summary "$scratch/recover.a.out" | sed -E 's/ recovered: .*//')
said=$(grep -m1 'recovering (epoch 1): this process runs ranks 0, 1' "$scratch/recover.a.err" 2>/dev/null || true)
ok=0
[ "$(f recover.a.rc)" = 0 ] && [ "$(f recover.b.rc)" = 137 ] && [ -n "$said" ] && [ "$got" = "$want" ] && ok=1
verdict recover $ok "exit a=$(f recover.a.rc) b=$(f recover.b.rc); ${said:-no recovery said}; '${got:-none}'"

said=$(grep -m1 'rank 1 (on host .*) does not find the file rank 0 .*the ranks do not share that directory' "$scratch/unshared.a.err" 2>/dev/null || true)
ok=0
[ "$(f unshared.a.rc)" = 1 ] && [ "$(f unshared.b.rc)" = 1 ] && [ -n "$said" ] && ok=1
verdict unshared $ok "exit a=$(f unshared.a.rc) b=$(f unshared.b.rc); ${said:-no refusal naming rank 1}"

line=$(grep -m1 'items done by worker 1' "$scratch/rr.a.out" 2>/dev/null || true)
ok=0
both_ok rr && [ -n "$line" ] && ok=1
verdict rr $ok "exit a=$(f rr.a.rc) b=$(f rr.b.rc); ${line:-no helped items reported}"

warn=$(cat "$scratch"/mtu.?.err 2>/dev/null | grep -m1 'active MTU .* differs' || true)
got=$(summary "$scratch/mtu.a.out")
ok=0
both_ok mtu && [ -n "$warn" ] && [ "$got" = "$want" ] && ok=1
verdict mtu $ok "active MTU a=$(f mtu.a.active) b=$(f mtu.b.active); exit a=$(f mtu.a.rc) b=$(f mtu.b.rc); ${warn:-no MTU warning}"

delay=$(f kill.a.delay) rc=$(f kill.a.rc)
named=$(grep -m1 'rank 1 has died' "$scratch/kill.a.err" 2>/dev/null || true)
ok=0
[ "$rc" != 0 ] && [ "$rc" != "?" ] && [ "$rc" != 124 ] && [ -n "$named" ] &&
	awk -v d="$delay" 'BEGIN{exit !(d != "?" && d + 0 <= 10)}' && ok=1
verdict kill $ok "rank 1 exit $(f kill.b.rc); rank 0 exit $rc ${delay} s after the kill; ${named:-no message names rank 1}"

echo
echo "two-host (soft-RoCE VM pair) results:"
printf '  %s\n' "${results[@]}"
if [ $fails != 0 ] || [ $vmrc != 0 ]; then
	for f in "$scratch"/*.err; do
		[ -s "$f" ] || continue
		echo "--- ${f##*/} (last lines)"
		tail -5 "$f"
	done
fi
echo "test-2vm: $((6 - fails)) passed, $fails failed; VM pair exit $vmrc; $((SECONDS - t0)) s"
[ $fails = 0 ] && [ $vmrc = 0 ]
