#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a job's processes hold, sampled (bench/memory.sh; not a test).

    bench/memsample.py [--every S] -- CMD ARGS...

Runs CMD (stdin, stdout and stderr its own) and every S seconds (0.05)
reads /proc/PID/smaps of it and of every process under it.  At the end it
prints one line on stderr:

    memsample: job_pss_mib=N rank_own_mib=0:A,1:B,... rc=RC

job_pss_mib: the highest sum over the job's processes of their PSS
(proportional set size: a page mapped by k processes counts 1/k in each),
so the shared-memory regions ranks write into each other count once: what
the job holds, whatever else runs on the host (MemAvailable moves with
every other process and with the page cache).

rank_own_mib: per rank (named by the flexrr-rN-... regions it created,
which it keeps open), its highest resident size without the pages of the
other ranks' regions mapped into it, and with its own regions counted by
the memory their files hold (st_blocks), not by the pages it touched.  A
rank writes the rows it owns into the replicas of the ranks that hold
them, and those pages count in its RSS (and in its peak memory line,
VmHWM) as well as in the holder's, or only in the writer's when the holder
never touched them (a replica faulted in on first touch,
FRR_TP_ACCESS_ON_TOUCH): its own figure is what lives in it, and what
job/memplan.c plans.
The exit status is CMD's.
"""
import os
import re
import subprocess
import sys
import time

MEMFD = re.compile(r"/memfd:flexrr-r(\d+)-")


def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/children") as f:
                    out += [int(x) for x in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def tree(pid):
    res, todo = [pid], [pid]
    while todo:
        c = children(todo.pop())
        res += c
        todo += c
    return res


def own_rank(pid):
    """The rank whose regions this process created (kept open), or None."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                m = MEMFD.search(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue
            if m:
                return int(m.group(1))
    except OSError:
        pass
    return None


def own_files_kib(pid, rank):
    """What the files of rank's own regions hold, KiB (each file once)."""
    seen, kib = set(), 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                m = MEMFD.search(os.readlink(f"/proc/{pid}/fd/{fd}"))
                if not m or int(m.group(1)) != rank:
                    continue
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                kib += st.st_blocks // 2
    except OSError:
        pass
    return kib


def sample(pid, rank):
    """(pss_kib, own_kib) of pid, or None once it is gone."""
    pss = rss = memfd = 0
    in_memfd = False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                if line[0] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:
                    in_memfd = bool(MEMFD.search(line)) and rank is not None
                elif line.startswith("Rss:"):
                    k = int(line.split()[1])
                    rss += k
                    if in_memfd:
                        memfd += k
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
    except (OSError, ValueError):
        return None
    if rank is None:
        return pss, rss
    return pss, rss - memfd + own_files_kib(pid, rank)


def main():
    args = sys.argv[1:]
    every = 0.05
    if args[:1] == ["--every"]:
        every = float(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: memsample.py [--every S] -- CMD ARGS...")
    p = subprocess.Popen(args)
    ranks, best_job, best_own = {}, 0, {}
    while p.poll() is None:
        job = 0
        for pid in tree(p.pid):
            if pid not in ranks or ranks[pid] is None:
                ranks[pid] = own_rank(pid)
            s = sample(pid, ranks[pid])
            if not s:
                continue
            job += s[0]
            r = ranks[pid]
            if r is not None and s[1] > best_own.get(r, 0):
                best_own[r] = s[1]
        best_job = max(best_job, job)
        time.sleep(every)
    own = ",".join(f"{r}:{best_own[r] // 1024}" for r in sorted(best_own))
    print(f"memsample: job_pss_mib={best_job // 1024} rank_own_mib={own or '-'} rc={p.returncode}",
          file=sys.stderr)
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
