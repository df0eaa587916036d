#!/bin/bash
# Runs in both VMs of `softroce-vm.sh pair` for scripts/test-sim-pair.sh:
# measures the wire (flexrr bench write_bw, VM b to VM a), then runs the jobs
# listed in SCRATCH/jobs across the pair, P/2 ranks in each VM.
#   guest-jobs.sh BUILD_DIR SCRATCH
# SCRATCH (shared by both VMs and the host) holds the inputs: token (the job
# secret), bw.n (how many 1 MiB writes write_bw makes), jobs (one job a
# line: NAME P ARGS..., the arguments of `flexrr run` after --backend
# verbs); and gets the outputs: bw (MB/s), and per job NAME and rank r
# NAME.r.out / .err / .rc (scripts/lib/pair.sh pair_ranks).
build=$1 out=$2
. "$(dirname "$0")/../lib/pair.sh"
B=$build/bin/flexrr
echo "jobs $SOFTROCE_VM: $RXE_DEV/$RXE_NETDEV $RXE_IP, peer $RXE_PEER_IP, $(nproc) cpu(s)"
pair_write_bw "$B" "$out" "$(cat "$out/bw.n")" || exit 1
echo "jobs $SOFTROCE_VM: write_bw VM b to VM a: ${pair_bw:-none} MB/s"
token=$(cat "$out/token") port=7200
while read -r name P args; do
	port=$((port + 1))
	# shellcheck disable=SC2086
	pair_ranks "$B" "$out" "$name" "$port" "$P" "$token-$name" "$out/$name" $args
	echo "jobs $SOFTROCE_VM: $name: exit $? ($(cat "$out/$name".*.rc 2>/dev/null | tr '\n' ' '))"
done <"$out/jobs"
exit 0
