#!/usr/bin/python3
"""Where a clock's close goes, from a --trace timeline (flexrr run --trace).

For each clock C after the first FIRST (steady clocks), with the workers'
"flush" spans (a worker's final batch of C sent) and the servers' "apply"
spans (a rank's server applying C, pushing its rows, writing its done
word) and the workers' "work" spans of C + 1 (a worker running again):

  skew     the last worker's flush end - the first worker's
  to_apply a server's apply start - the last flush end (the batches are in
           place when a flush ends on shm: this is the server's wake-up)
  apply    a server's apply span
  to_work  a worker's start of C + 1 - the last apply end (its wake-up;
           "latest": the later worker's, each clock)
  eval     a server's "evaluate" span of C (clock_local and its stats),
           which follows the applies on the same thread, and the leader's
           "clock_global"; on a host with fewer cores than threads it
           takes a core a worker would run on

Prints the median and the mean of each over the steady clocks, per rank or
worker, in milliseconds.
  bench/trace-clocks.py TRACE.json [FIRST]   (FIRST default 2)
"""
import json
import statistics
import sys


def spans(events, name):
    out = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") == name:
            c = e["args"]["clock"]
            out.setdefault(c, []).append(
                (e["pid"], e["tid"], e["ts"] / 1e3, (e["ts"] + e["dur"]) / 1e3))
    return out


def main():
    events = json.load(open(sys.argv[1]))
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    flush, apply_, work, ev, gl = (
        spans(events, n)
        for n in ("flush", "apply", "work", "evaluate", "clock_global"))
    rows = {"skew": [], "to_apply": {}, "apply": {}, "to_work": {},
            "eval": {}, "global": {}}
    last = max(flush) if flush else -1
    for c in range(first, last):
        if c not in flush or c not in apply_ or c + 1 not in work:
            continue
        ends = [s[3] for s in flush[c]]
        f = max(ends)
        rows["skew"].append(f - min(ends))
        a_end = max(s[3] for s in apply_[c])
        for pid, _, t0, t1 in apply_[c]:
            rows["to_apply"].setdefault("rank %d" % pid, []).append(t0 - f)
            rows["apply"].setdefault("rank %d" % pid, []).append(t1 - t0)
        for pid, _, t0, t1 in ev.get(c, []):
            rows["eval"].setdefault("rank %d" % pid, []).append(t1 - t0)
        for pid, _, t0, t1 in gl.get(c, []):
            rows["global"].setdefault("rank %d" % pid, []).append(t1 - t0)
        # the first work span of C + 1 per worker
        seen = {}
        for pid, tid, t0, _ in work[c + 1]:
            seen[tid] = min(seen.get(tid, t0), t0)
        for tid, t0 in seen.items():
            rows["to_work"].setdefault("worker %d" % tid, []).append(
                t0 - a_end)
        if seen:
            rows["to_work"].setdefault("latest", []).append(
                max(seen.values()) - a_end)
    print("steady clocks %d..%d, ms: median (mean)" % (first, last - 1))

    def show(label, xs):
        if xs:
            print("  %-9s %-9s %7.3f (%7.3f)  n=%d" % (
                label[0], label[1], statistics.median(xs),
                statistics.mean(xs), len(xs)))

    show(("skew", "workers"), rows["skew"])
    for k in ("to_apply", "apply", "to_work", "eval", "global"):
        for who, xs in sorted(rows[k].items()):
            show((k, who), xs)


if __name__ == "__main__":
    main()
