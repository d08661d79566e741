#!/usr/bin/env python3
"""stat_compare.py — checks for stat_test: compares arenalloc-stat's output
with what heap_target printed about itself.

  stat_compare.py stats TARGET_OUT STAT_JSON
      the "stats" section and every arena (bins and large classes
      included) equal the program's own malloc_stats_print figures; lock
      counters excepted (reading the statistics takes the locks).
  stat_compare.py find TARGET_OUT FIND_JSON_LINES
      each known pointer: state, region start and usable size as printed.
  stat_compare.py pick TARGET_OUT STATE
      prints the address of the first known pointer in STATE.
"""
import json
import sys

SKIP = {"lock_acquired", "lock_contended"}


def target(path):
    stats, ptrs = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("stats "):
                stats = json.loads(line[6:])["arenalloc"]
            elif line.startswith("ptr "):
                words = line.split()
                ptrs.append({"state": " ".join(words[1:-3]), "address": int(words[-3], 16),
                             "start": int(words[-2], 16), "size": int(words[-1])})
    if stats is None or not ptrs:
        sys.exit("no statistics or pointers in " + path)
    return stats, ptrs


def same(what, mine, theirs, problems):
    if isinstance(mine, dict):
        for k in mine:
            if k in SKIP:
                continue
            if k not in theirs:
                problems.append("%s.%s: missing from arenalloc-stat" % (what, k))
            else:
                same(what + "." + k, mine[k], theirs[k], problems)
    elif isinstance(mine, list):
        if len(mine) != len(theirs):
            problems.append("%s: %d entries, arenalloc-stat has %d" % (what, len(mine), len(theirs)))
        for i, (a, b) in enumerate(zip(mine, theirs)):
            same("%s[%d]" % (what, i), a, b, problems)
    elif mine != theirs:
        problems.append("%s: program says %r, arenalloc-stat %r" % (what, mine, theirs))


def main():
    mode, out = sys.argv[1], sys.argv[2]
    stats, ptrs = target(out)
    problems = []
    if mode == "stats":
        with open(sys.argv[3]) as f:
            walked = json.load(f)["arenalloc"]
        same("stats", stats["stats"], walked["stats"], problems)
        same("arenas", stats["arenas"], walked["arenas"], problems)
        if len(stats["arenas"]) < 2:
            problems.append("the program used %d arena(s), expected 2" % len(stats["arenas"]))
    elif mode == "find":
        with open(sys.argv[3]) as f:
            found = [json.loads(l) for l in f if l.startswith("{")]
        if len(found) != len(ptrs):
            problems.append("%d answers for %d pointers" % (len(found), len(ptrs)))
        for p, r in zip(ptrs, found):
            where = "%#x (%s)" % (p["address"], p["state"])
            if r["address"] != p["address"]:
                problems.append(where + ": answer for %#x" % r["address"])
            if r["state"] != p["state"]:
                problems.append(where + ": state %r" % r["state"])
            if r["region_start"] != p["start"]:
                problems.append(where + ": region start %#x, expected %#x" % (r["region_start"], p["start"]))
            if r["size"] != p["size"]:
                problems.append(where + ": size %d, expected %d" % (r["size"], p["size"]))
        states = {p["state"] for p in ptrs}
        for s in ("allocated", "free", "in a thread cache", "huge"):
            if s not in states:
                problems.append("no known pointer is " + s)
    elif mode == "pick":
        print("%#x" % next(p["address"] for p in ptrs if p["state"] == sys.argv[3]))
        return
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
