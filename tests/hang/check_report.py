#!/usr/bin/env python3
"""Checks the launcher's JSON hang report for one case of hang_cases.c.

    check_report.py CASE FILE

FILE holds the launcher's stderr; the report is its line starting with
{"sonde":"hang". Exits non-zero with a message when the report does not
name the ranks, calls, tags and communicators the case hangs on.
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith('{"sonde":"hang"'):
                return json.loads(line)
    sys.exit("no hang report in the launcher's output")


def rank(r, n):
    return next(x for x in r["ranks"] if x["rank"] == n)


def findings(r, kind):
    return [f for f in r["findings"] if f["kind"] == kind]


def has_cycle(r, members):
    return any(sorted(c) == sorted(members) for c in r["cycles"])


def expect(cond, what):
    if not cond:
        sys.exit("report check failed: " + what)


def check_ages(r):
    """Every entry was there before the job stalled (an Iprobe loop's record
    excepted: it may be noticed later), so its age, measured by its rank
    from when it entered its state, is at least the stall less one watch
    period; the collective a rank waits in, likewise, as its time in the call."""
    floor = r["stalled_seconds"] - 0.5
    for x in r["ranks"]:
        for key in ("recvs", "sends", "unexpected"):
            for e in x[key]:
                if e["stage"] == "polling":
                    continue
                expect(e["age"] >= floor, f"rank {x['rank']}'s {key} entry is {e['age']} s old, "
                       f"stalled {r['stalled_seconds']} s")
        c = x.get("collective")
        if c:
            expect(c["age"] is not None and c["age"] >= floor,
                   f"rank {x['rank']} in {c['call']} #{c['seq']} for {c['age']} s")


def main():
    case, report = sys.argv[1], load(sys.argv[2])
    check_ages(report)
    if case == "ssend":
        for n in (0, 1):
            x = rank(report, n)
            expect(x["state"] == "in-call" and x["call"] == "MPI_Ssend", f"rank {n} in MPI_Ssend")
            s = x["sends"]
            expect(len(s) == 1 and s[0]["dest"] == 1 - n and s[0]["tag"] == 5 and s[0]["sync"], f"rank {n}'s Ssend")
            expect(s[0]["comm"] == "MPI_COMM_WORLD", "on MPI_COMM_WORLD")
        expect(has_cycle(report, [0, 1]), "cycle 0-1")
        expect(findings(report, "deadlock"), "a deadlock finding")
    elif case == "rendezvous":
        for n in (0, 1):
            x = rank(report, n)
            expect(x["call"] == "MPI_Send", f"rank {n} in MPI_Send")
            s = x["sends"][0]
            expect(s["dest"] == 1 - n and s["tag"] == 6 and s["bytes"] == 1 << 20, f"rank {n}'s send")
            expect(s["stage"] == "rendezvous-wait", f"rank {n}'s send waits for its receiver")
        expect(has_cycle(report, [0, 1]), "cycle 0-1")
    elif case == "wrong-tag":
        x = rank(report, 1)
        expect(x["call"] == "MPI_Recv", "rank 1 in MPI_Recv")
        expect(any(r["source"] == 0 and r["tag"] == 9 for r in x["recvs"]), "rank 1's receive of tag 9 from 0")
        expect(any(u["source"] == 0 and u["tag"] == 8 for u in x["unexpected"]), "tag 8 unexpected at 1")
        f = findings(report, "tag-mismatch")
        expect(f and f[0]["rank"] == 1 and f[0]["tag"] == 9 and f[0]["sent_tag"] == 8, "the tag mismatch")
        expect(rank(report, 0)["call"] == "MPI_Barrier", "rank 0 in MPI_Barrier")
    elif case == "wrong-source":
        f = findings(report, "source-mismatch")
        expect(f and f[0]["rank"] == 1 and f[0]["source"] == 0 and f[0]["sent_by"] == 2 and f[0]["tag"] == 7,
               "the source mismatch")
    elif case in ("skip-coll", "skip-shared"):
        before = 3 if case == "skip-coll" else 20
        f = findings(report, "skipped-collective")
        expect(f, "a skipped collective")
        f = f[0]
        expect(f["call"] == "MPI_Allreduce" and f["comm"] == "rows" and f["seq"] == before + 1,
               "MPI_Allreduce #%d on rows" % (before + 1))
        last = len(report["ranks"]) - 1
        expect(f["missing"] == [last] and f["waiting"] == list(range(last)), "who skipped and who waits")
        c = rank(report, 0)["collective"]
        expect(c and c["comm"] == "rows" and c["completed"] == before,
               "rank 0 completed %d collectives on rows" % before)
        expect(rank(report, last)["call"] == "MPI_Recv", "the last rank in MPI_Recv")
    elif case == "roots":
        for x in report["ranks"]:
            expect(x["call"] == "MPI_Bcast", "every rank in MPI_Bcast")
            expect(x["collective"]["call"] == "MPI_Bcast" and x["collective"]["seq"] == 1, "Bcast #1")
            expect(all(s["stage"] == "rendezvous-wait" for s in x["sends"]), "every root's send waits")
        expect(report["cycles"], "a cycle among the roots")
    elif case == "any-source":
        x = rank(report, 0)
        expect(x["call"] == "MPI_Recv" and x["recvs"][0]["source"] == -2 and x["recvs"][0]["tag"] == 4,
               "rank 0's ANY_SOURCE receive of tag 4")
        expect(any(e["from"] == 0 and e["why"] == "recv" for e in report["edges"]), "rank 0 waits on the others")
        f = findings(report, "skipped-collective")
        expect(f and f[0]["missing"] == [0] and f[0]["call"] == "MPI_Barrier", "rank 0 never entered the barrier")
    elif case == "user-code":
        expect(rank(report, 1)["state"] == "user-code", "rank 1 in user code")
        expect(1 in report["waited_on"], "rank 1 is waited on")
        f = findings(report, "user-code")
        expect(f and f[0]["rank"] == 1 and 0 in f[0]["waiting"], "rank 0 waits for rank 1 in user code")
    elif case == "cycle3":
        expect(has_cycle(report, [0, 1, 2]), "cycle 0-1-2")
        for n in range(3):
            s = rank(report, n)["sends"][0]
            expect(s["dest"] == (n + 1) % 3 and s["tag"] == 11, f"rank {n}'s Ssend")
    elif case == "spawned":
        # Members of the spawned job and of the parents' intercommunicator
        # are the launcher's slots: children 0-2 are ranks 2-4.
        expect(has_cycle(report, [0, 2, 3]), f"cycle 0-2-3 across the jobs, got {report['cycles']}")
        expect(not has_cycle(report, [0, 1, 2]) and not has_cycle(report, [0, 1]), "no cycle among wrong ranks")
        edge = lambda a, b, why: any(e["from"] == a and e["to"] == b and e["why"] == why for e in report["edges"])
        expect(edge(0, 2, "recv"), "parent 0's receive waits for child 0 (rank 2)")
        expect(edge(2, 3, "send"), "child 0's Ssend waits for child 1 (rank 3)")
        expect(edge(3, 0, "recv"), "child 1's receive waits for parent 0 (rank 0)")
        expect(edge(1, 0, "collective"), "parent 1's barrier waits for parent 0")
        expect(edge(4, 2, "collective") and edge(4, 3, "collective"), "child 2's barrier waits for children 0, 1")
        expect(not any(e["to"] in (1, 4) and e["from"] in (0, 2, 3) for e in report["edges"]),
               "nobody in the cycle waits for rank 1 or 4")
    elif case == "probe":
        x = rank(report, 1)
        expect(x["call"] == "MPI_Probe", "rank 1 in MPI_Probe")
        p = [r for r in x["recvs"] if r["probe"] == "MPI_Probe"]
        expect(p and p[0]["source"] == 0 and p[0]["tag"] == 9 and p[0]["stage"] == "probe"
               and p[0]["comm"] == "MPI_COMM_WORLD", "rank 1's probe for tag 9 from 0")
        expect(any(e["from"] == 1 and e["to"] == 0 and e["call"] == "MPI_Probe" for e in report["edges"]),
               "rank 1's probe waits for rank 0")
        f = findings(report, "tag-mismatch")
        expect(f and f[0]["rank"] == 1 and f[0]["tag"] == 9 and f[0]["sent_tag"] == 8 and f[0]["probe"] == "MPI_Probe",
               "the probe's tag mismatch")
    elif case == "mprobe":
        for n in (0, 1):
            x = rank(report, n)
            expect(x["call"] == "MPI_Mprobe", f"rank {n} in MPI_Mprobe")
            p = [r for r in x["recvs"] if r["probe"] == "MPI_Mprobe"]
            expect(p and p[0]["source"] == 1 - n and p[0]["tag"] == 12, f"rank {n}'s Mprobe")
        expect(has_cycle(report, [0, 1]), "cycle 0-1")
        expect(findings(report, "deadlock"), "a deadlock finding")
    elif case == "iprobe":
        x = rank(report, 0)
        expect(x["state"] in ("user-code", "in-call"), "rank 0 polls")
        p = [r for r in x["recvs"] if r["probe"] == "MPI_Iprobe"]
        expect(p and p[0]["source"] == 1 and p[0]["tag"] == 13 and p[0]["stage"] == "polling", "rank 0's Iprobe loop")
        expect(any(e["from"] == 0 and e["to"] == 1 and e["call"] == "MPI_Iprobe" for e in report["edges"]),
               "rank 0's Iprobe loop waits for rank 1")
        f = findings(report, "skipped-collective")
        expect(f and f[0]["missing"] == [0] and f[0]["call"] == "MPI_Barrier", "rank 0 never entered the barrier")
    elif case == "threads":
        x = rank(report, 0)
        expect(x["state"] == "in-call" and x["call"] == "MPI_Recv", "rank 0 answers from its thread in MPI_Recv")
        expect(any(r["source"] == 1 and r["tag"] == 14 for r in x["recvs"]), "the thread's receive of tag 14 from 1")
        expect(any(e["from"] == 0 and e["to"] == 1 and e["call"] == "MPI_Recv" for e in report["edges"]),
               "rank 0 waits for rank 1")
    else:
        sys.exit("unknown case " + case)


main()
