#!/usr/bin/env python3
"""stat_compare.py — checks for stat_test and gdb_test: compares what a
reader of the heap (arenalloc-stat, the gdb commands) printed with what
heap_target printed about itself.  Lines that are not the reader's (gdb's
own messages) may surround its JSON.

  stat_compare.py stats TARGET_OUT STAT_JSON
      the "stats" section and every arena (bins and large classes
      included) equal the program's own malloc_stats_print figures; lock
      counters excepted (reading the statistics takes the locks).
  stat_compare.py find TARGET_OUT FIND_JSON_LINES
      each known pointer: state, region start and usable size as printed.
  stat_compare.py pick TARGET_OUT STATE
      prints the address of the first known pointer in STATE.
  stat_compare.py flip-tag CORE FIND_JSON
      in the core file, flips bit 1 of the page map entry FIND_JSON (a
      --find/find -json answer) names: the tag says "large" for a page of
      a small run.
  stat_compare.py hole CORE FIND_JSON
      empties (p_filesz 0) the core's segment holding that entry, as when
      a dump leaves memory out.
  stat_compare.py arenas TARGET_OUT GDB_OUT
      the rows of `arenalloc arenas' equal the program's per-arena figures.
  stat_compare.py bins TARGET_OUT GDB_OUT
      the rows of `arenalloc bins' equal the program's bins, and every bin
      the program used has a row.
"""
import json
import re
import struct
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


def load_json(path):
    """The first JSON object in path, at the start of a line."""
    with open(path) as f:
        text = f.read()
    for line_start in [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]:
        if text.startswith("{", line_start):
            return json.JSONDecoder().raw_decode(text, line_start)[0]
    sys.exit("no JSON object in " + path)


ARENA_COLUMNS = ["index", "address", "nthreads", "nchunks", "mapped", "active", "dirty",
                 "small", "large", "nmalloc", "ndalloc"]
BIN_COLUMNS = ["bin", "size", "nregs", "run_size", "nmalloc", "ndalloc", "nrequests",
               "curregs", "curruns", "nruns"]


def table_rows(path, ncols):
    """(section, row) for each line of ncols numbers (decimal or 0x);
    section is the number of the last "arena N:" line above it."""
    rows, section = [], None
    with open(path) as f:
        for line in f:
            m = re.match(r"^arena (\d+):$", line.strip())
            if m:
                section = int(m.group(1))
                continue
            words = line.split()
            if len(words) == ncols and all(re.match(r"^(0x[0-9a-f]+|\d+)$", w) for w in words):
                rows.append((section, [int(w, 0) for w in words]))
    return rows


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


def patch_core(core, find_json, how):
    """Applies how ("flip-tag" or "hole") at the page map entry of the
    find answer in find_json, in the ELF core file core (32- or 64-bit,
    either byte order: a page map entry is one pointer)."""
    entry = load_json(find_json)["page_map_entry"]
    with open(core, "r+b") as f:
        ehdr = f.read(64)
        is64 = ehdr[4] == 2
        order = ">" if ehdr[5] == 2 else "<"
        word = "Q" if is64 else "I"
        wsize = 8 if is64 else 4
        if is64:
            phoff, = struct.unpack_from(order + "Q", ehdr, 32)
            phentsize, phnum = struct.unpack_from(order + "HH", ehdr, 54)
            # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz
            phdr, filesz_at = order + "IIQQQQ", 32
        else:
            phoff, = struct.unpack_from(order + "I", ehdr, 28)
            phentsize, phnum = struct.unpack_from(order + "HH", ehdr, 42)
            # p_type, p_offset, p_vaddr, p_paddr, p_filesz
            phdr, filesz_at = order + "IIIII", 16
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            fields = struct.unpack(phdr, f.read(struct.calcsize(phdr)))
            ptype, off, vaddr, filesz = fields[0], fields[-4], fields[-3], fields[-1]
            if ptype == 1 and vaddr <= entry < vaddr + filesz:
                if how == "hole":
                    f.seek(phoff + i * phentsize + filesz_at)
                    f.write(struct.pack(order + word, 0))  # p_filesz: nothing of it in the file
                else:
                    f.seek(off + entry - vaddr)
                    v, = struct.unpack(order + word, f.read(wsize))
                    f.seek(off + entry - vaddr)
                    f.write(struct.pack(order + word, v ^ 2))
                return
    sys.exit("entry %#x not in the core" % entry)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    if mode in ("flip-tag", "hole"):
        patch_core(sys.argv[2], sys.argv[3], mode)
        return
    stats, ptrs = target(out)
    problems = []
    if mode == "stats":
        walked = load_json(sys.argv[3])["arenalloc"]
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
    elif mode == "arenas":
        rows = {r[0]: dict(zip(ARENA_COLUMNS, r)) for _, r in table_rows(sys.argv[3], 11)}
        for a in stats["arenas"]:
            r = rows.pop(a["index"], None)
            if r is None:
                problems.append("arena %d: no row" % a["index"])
                continue
            want = {"nthreads": a["nthreads"], "mapped": a["mapped"], "active": a["active"],
                    "dirty": a["dirty"], "small": a["small"]["allocated"],
                    "large": a["large"]["allocated"],
                    "nmalloc": a["small"]["nmalloc"] + a["large"]["nmalloc"],
                    "ndalloc": a["small"]["ndalloc"] + a["large"]["ndalloc"]}
            for k, v in want.items():
                if r[k] != v:
                    problems.append("arena %d %s: program says %d, the row %d" % (a["index"], k, v, r[k]))
        for i in rows:
            problems.append("arena %d: a row, but the program has no such arena" % i)
    elif mode == "bins":
        rows = {}
        for section, r in table_rows(sys.argv[3], 10):
            rows[(section, r[0])] = dict(zip(BIN_COLUMNS, r))
        for a in stats["arenas"]:
            for i, b in enumerate(a["bins"]):
                r = rows.pop((a["index"], i), None)
                if r is None:
                    if b["nmalloc"] != 0 or b["curruns"] != 0:
                        problems.append("arena %d bin %d: used, but no row" % (a["index"], i))
                    continue
                for k in BIN_COLUMNS[1:]:
                    if r[k] != b[k]:
                        problems.append("arena %d bin %d %s: program says %d, the row %d" % (
                            a["index"], i, k, b[k], r[k]))
        for k in rows:
            problems.append("arena %s bin %d: a row, but no such bin" % k)
        if not any(b["nmalloc"] for a in stats["arenas"] for b in a["bins"]):
            problems.append("the program used no small class")
    elif mode == "pick":
        print("%#x" % next(p["address"] for p in ptrs if p["state"] == sys.argv[3]))
        return
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
