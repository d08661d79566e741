#!/usr/bin/env python3
"""stats_jemalloc_check.py — checks for malloc_stats_print's "J" report
(jemalloc 5.3's JSON layout), used by stats_test.

  stats_jemalloc_check.py paths JSON
      every key path of CONSUMER_PATHS is in the report (the paths a tool
      written for jemalloc 5.3 reads; jemalloc 5.3's own report has them
      all too, which is how the list was checked); exits 1 naming those
      missing.
  stats_jemalloc_check.py names JSON
      one line per number or truth value of the report: the mallctl name
      that should give it (key path with dots; "merged" is arena 4096;
      list entries by position), the older arenalloc name for the same
      figure or "-", and the value (0/1 for false/true).  Figures that
      change when they are read (lock counts) and sums with no name of
      their own (small.nfills, small.nflushes) are left out; the latter
      are checked here against the bins they add up.
"""
import json
import sys

# A path: keys separated by "/"; "[]" stands for every entry of a list
# (which must not be empty).  "0" is the first arena.
CONSUMER_PATHS = """
jemalloc/version
jemalloc/config/debug
jemalloc/config/fill
jemalloc/config/stats
jemalloc/opt/abort
jemalloc/opt/narenas
jemalloc/opt/junk
jemalloc/opt/zero
jemalloc/opt/tcache
jemalloc/opt/thp
jemalloc/opt/stats_print
jemalloc/arenas/narenas
jemalloc/arenas/page
jemalloc/arenas/quantum
jemalloc/arenas/nbins
jemalloc/arenas/nlextents
jemalloc/arenas/bin/[]/size
jemalloc/arenas/bin/[]/nregs
jemalloc/arenas/bin/[]/slab_size
jemalloc/arenas/lextent/[]/size
jemalloc/stats/allocated
jemalloc/stats/active
jemalloc/stats/metadata
jemalloc/stats/resident
jemalloc/stats/mapped
jemalloc/stats/retained
""".split()
for arena in ("merged", "0"):
    CONSUMER_PATHS += ["jemalloc/stats.arenas/%s/%s" % (arena, p) for p in """
nthreads pactive pdirty dirty_npurge dirty_nmadvise dirty_purged
small/allocated small/nmalloc small/ndalloc small/nrequests small/nfills small/nflushes
large/allocated large/nmalloc large/ndalloc large/nrequests
mapped retained resident
bins/[]/nmalloc bins/[]/ndalloc bins/[]/curregs bins/[]/nrequests bins/[]/nfills
bins/[]/nflushes bins/[]/curslabs
lextents/[]/curlextents
""".split()]

# jemalloc's name -> the name arenalloc's mallctl had for the figure first.
OLDER_NAMES = {"dirty_npurge": "npurge", "dirty_nmadvise": "nmadvise",
               "dirty_purged": "purged", "curslabs": "curruns", "nslabs": "nruns"}
UNNAMED = {"nfills", "nflushes"}  # under "small": sums over the bins


def missing_paths(doc):
    missing = []
    for path in CONSUMER_PATHS:
        nodes = [doc]
        for key in path.split("/"):
            nxt = []
            for n in nodes:
                if key == "[]" and isinstance(n, list) and n:
                    nxt += n
                elif key != "[]" and isinstance(n, dict) and key in n:
                    nxt.append(n[key])
            if len(nxt) == 0:
                missing.append(path)
                break
            nodes = nxt
    return missing


def leaves(node, path):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + [k])
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + [str(i)])
    else:
        yield path, node


def names(doc, out):
    problems = []
    for arena, a in doc["jemalloc"].get("stats.arenas", {}).items():
        for key in ("nfills", "nflushes"):
            total = sum(b[key] for b in a.get("bins", []))
            if "bins" in a and a["small"][key] != total:
                problems.append("%s: small.%s %d, bins sum %d" % (arena, key, a["small"][key], total))
    for path, value in leaves(doc["jemalloc"], []):
        # uptime_ns moves on between the epoch's snapshot and the report.
        if "mutexes" in path or isinstance(value, str) or path[-1] == "uptime_ns":
            continue
        if path[0] == "stats.arenas" and path[2] == "small" and path[-1] in UNNAMED:
            continue
        if path[0] == "stats.arenas" and path[1] == "merged":
            path = path[:1] + ["4096"] + path[2:]
        name = ".".join(path)
        older = OLDER_NAMES.get(path[-1])
        alias = ".".join(path[:-1] + [older]) if older else "-"
        out.write("%s %s %d\n" % (name, alias, int(value)))
    return problems


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    if mode == "paths":
        missing = missing_paths(doc)
        for p in missing:
            print("missing: " + p)
        sys.exit(1 if missing else 0)
    problems = names(doc, sys.stdout)
    for p in problems:
        print("problem: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


main()
