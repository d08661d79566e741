# arenalloc.py — gdb commands that inspect an arenalloc heap.
#
#   (gdb) source contrib/gdb/arenalloc.py      (or auto-loaded, see below)
#   (gdb) arenalloc stats [-json] [-brief]     the malloc_stats_print report
#   (gdb) arenalloc arenas                     one line per arena
#   (gdb) arenalloc bins [ARENA]               small classes in use
#   (gdb) arenalloc chunks [-runs]             chunks (and runs), huge blocks
#   (gdb) arenalloc find [-json] ADDRESS       what an address is
#   (gdb) arenalloc verify [-json]             check the heap: "heap OK" or what is wrong
#
# They work on a live process and on a core file, with a stripped
# libarenalloc: the heap is read through the exported debug descriptor,
# found by its dynamic symbol (arenalloc_debug_descriptor), and every figure
# is computed by the heap walker library, libarenalloc_walker.so, driven
# here through ctypes with gdb's memory reads as its read callback.  So the
# numbers are the walker's, the same arenalloc-stat prints.  This file only
# reads target memory and prints.
#
# The walker library is looked for in this order: $ARENALLOC_WALKER (a
# path), the installed one (filled in by `make install'), next to this
# file, then relative to this file and to the target's libarenalloc in a
# build tree (tools/walker/.libs/) or an installation ($libdir/arenalloc/).
#
# Auto-loading: `make install' also copies this file to
# $datadir/gdb/auto-load$libdir/libarenalloc.so.N.N.N-gdb.py, where gdb
# finds it when the library is loaded, provided that directory is among
# gdb's `auto-load scripts-directory' (it is, for a /usr install) and
# allowed by `auto-load safe-path'.
#
# Without gdb (plain python3) the module only defines the ctypes mirror of
# arenalloc_walker.h, so a test can compare the two.

import ctypes
import os
import re

try:
    import gdb
except ImportError:  # imported by a test outside gdb
    gdb = None

# Set by `make install' to the installed walker library.
INSTALLED_WALKER = None

DESCRIPTOR_SYMBOL = "arenalloc_debug_descriptor"
WALKER_NAME = "libarenalloc_walker.so"

AA_REPORT_JSON = 1
AA_REPORT_NO_BINS = 2
AA_REPORT_NO_LARGE = 4

try:
    _HERE = os.path.dirname(os.path.abspath(__file__))
except NameError:
    _HERE = os.getcwd()


# --- the C interface of arenalloc_walker.h, mirrored --------------------------
# Every figure is a uint64_t; tests/integration/gdb_test checks these lists
# against the header.

def _u64_struct(name, fields, extra=()):
    return type(name, (ctypes.Structure,),
                {"_fields_": [(f, ctypes.c_uint64) for f in fields] + list(extra)})


AaConfig = _u64_struct("aa_config", [
    "descriptor_version", "page_size", "quantum", "chunk_size", "lg_chunk",
    "chunk_header_pages", "nbins", "nclasses", "nlarge", "small_max", "large_max",
    "narenas", "initialized"], [("package_version", ctypes.c_char * 24)])

AaTotals = _u64_struct("aa_totals", [
    "narenas", "narenas_used",
    "allocated", "active", "metadata", "resident", "mapped", "retained", "dirty",
    "nchunks",
    "huge_nmalloc", "huge_ndalloc", "huge_current", "huge_allocated", "huge_mapped",
    "huge_cached",
    "nmalloc_small", "nmalloc_large", "nmalloc", "nfree",
    "nthreads_seen", "tcaches", "tcache_regions", "tcache_bytes"])

AaArenaStats = _u64_struct("aa_arena_stats", [
    "index", "address", "nthreads",
    "mapped", "retained", "active", "dirty", "resident",
    "allocated_small", "allocated_large",
    "nmalloc_small", "ndalloc_small", "nmalloc_large", "ndalloc_large",
    "npurge_passes", "nmadvise", "npurged_pages",
    "lock_acquired", "lock_contended", "nchunks", "lock_held"])

AaBinStats = _u64_struct("aa_bin_stats", [
    "bin", "region_size", "nregs", "run_size",
    "nmalloc", "ndalloc", "nrequests", "curregs", "curruns", "nruns", "nfills",
    "nflushes"])

AaLargeStats = _u64_struct("aa_large_stats", [
    "lclass", "size", "nmalloc", "ndalloc", "curruns"])

AaChunkInfo = _u64_struct("aa_chunk_info", [
    "address", "size", "arena_index", "arena_address",
    "npages", "header_pages", "nfree_pages", "from_sbrk"])

AaRunInfo = _u64_struct("aa_run_info", [
    "chunk", "address", "npages", "state", "size_class", "region_size",
    "nregs", "nfree", "ndirty", "descriptor"])

AaHugeInfo = _u64_struct("aa_huge_info", [
    "address", "usize", "mapped", "arena_address", "descriptor"])

AaFindResult = _u64_struct("aa_find_result", [
    "address", "state", "chunk", "arena_index", "run", "run_pages", "size_class",
    "size", "region_index", "region_start", "offset", "tcache", "page_map_entry",
    "run_descriptor"])

STRUCTS = [AaConfig, AaTotals, AaArenaStats, AaBinStats, AaLargeStats, AaChunkInfo,
           AaRunInfo, AaHugeInfo, AaFindResult]

RUN_STATES = {0: "free", 1: "small", 2: "large"}

READ_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                           ctypes.c_void_p, ctypes.c_size_t)
CHUNK_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(AaChunkInfo))
RUN_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(AaRunInfo))
HUGE_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(AaHugeInfo))


class ArenallocError(Exception):
    """One line for the user; never a traceback."""


def _walker_candidates():
    env = os.environ.get("ARENALLOC_WALKER")
    if env:
        return [env]  # named: only that one
    dirs = []
    if INSTALLED_WALKER:
        dirs.append(os.path.dirname(INSTALLED_WALKER))
    dirs += [_HERE,
             os.path.join(_HERE, "..", "..", "tools", "walker", ".libs"),
             os.path.join(_HERE, "..", "..", "build", "tools", "walker", ".libs")]
    if gdb is not None:
        try:
            for objfile in gdb.objfiles():
                name = objfile.filename or ""
                if "libarenalloc" in os.path.basename(name):
                    d = os.path.dirname(os.path.realpath(name))
                    dirs += [os.path.join(d, "arenalloc"),
                             os.path.join(d, "..", "..", "tools", "walker", ".libs")]
        except gdb.error:
            pass
    return [os.path.join(d, WALKER_NAME) for d in dirs]


_lib = None


def walker_library():
    """The walker library, loaded once, with its prototypes declared."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _walker_candidates():
        if not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(os.path.realpath(path))
        except OSError as e:
            raise ArenallocError("cannot load the heap walker %s: %s" % (path, e))
        break
    else:
        raise ArenallocError("cannot find %s (set ARENALLOC_WALKER to its path); looked in %s"
                             % (WALKER_NAME, ", ".join(os.path.normpath(p) for p in tried)))
    vp, u64, c_int, c_uint = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint
    P = ctypes.POINTER
    protos = {
        "aa_walker_open": (vp, [READ_FN, vp, u64, ctypes.c_char_p, ctypes.c_size_t]),
        "aa_walker_close": (None, [vp]),
        "aa_walker_error": (ctypes.c_char_p, [vp]),
        "aa_walker_config": (c_int, [vp, P(AaConfig)]),
        "aa_walker_totals": (c_int, [vp, P(AaTotals)]),
        "aa_walker_arena": (c_int, [vp, c_uint, P(AaArenaStats)]),
        "aa_walker_bin": (c_int, [vp, c_uint, c_uint, P(AaBinStats)]),
        "aa_walker_large": (c_int, [vp, c_uint, c_uint, P(AaLargeStats)]),
        "aa_walker_chunks": (c_int, [vp, CHUNK_CB, vp]),
        "aa_walker_runs": (c_int, [vp, u64, RUN_CB, vp]),
        "aa_walker_huge": (c_int, [vp, HUGE_CB, vp]),
        "aa_walker_find": (c_int, [vp, u64, P(AaFindResult)]),
        "aa_walker_state_name": (ctypes.c_char_p, [u64]),
        # Strings the walker allocates come back as raw pointers so that
        # they can be given back with aa_walker_free_string.
        "aa_walker_report": (vp, [vp, c_int]),
        "aa_walker_find_report": (vp, [vp, u64, c_int]),
        "aa_walker_verify_report": (vp, [vp, c_int]),
        "aa_walker_free_string": (None, [vp]),
    }
    for name, (restype, argtypes) in protos.items():
        fn = getattr(lib, name, None)
        if fn is None:
            raise ArenallocError("%s has no %s: another version of the walker" % (path, name))
        fn.restype, fn.argtypes = restype, argtypes
    _lib = lib
    return lib


# --- reading the target -------------------------------------------------------

class PageCache:
    """Target memory read through gdb, a page at a time, kept for one
    command (the target does not run while a command runs)."""

    # The unit of reading, not the heap's page (the descriptor's
    # page_size): any system maps memory in 4 KiB steps or coarser.
    PAGE = 4096

    def __init__(self, inferior, holes=()):
        self.inferior = inferior
        self.holes = holes  # ranges gdb would read as zeros: refused
        self.pages = {}

    def _page(self, base):
        if base not in self.pages:
            try:
                self.pages[base] = bytes(self.inferior.read_memory(base, self.PAGE))
            except (gdb.MemoryError, gdb.error, OverflowError, ValueError):
                self.pages[base] = None  # read what is wanted exactly, below
        return self.pages[base]

    def read(self, addr, length):
        for start, end in self.holes:
            if addr < end and start < addr + length:
                raise ValueError("%#x is not in the core file" % max(addr, start))
        out = bytearray()
        while length > 0:
            base = addr - addr % self.PAGE
            n = min(length, base + self.PAGE - addr)
            page = self._page(base)
            if page is None:
                out += bytes(self.inferior.read_memory(addr, n))
            else:
                out += page[addr - base:addr - base + n]
            addr += n
            length -= n
        return bytes(out)


def core_holes():
    """Address ranges of a core file's segments that have no contents in
    it (left out of the dump: a coredump_filter, a dump cut short) and
    that no loaded file supplies.  gdb reads them as zeros; the walker
    must be told they cannot be read instead."""
    try:
        listing = gdb.execute("maint info sections -all-objects", to_string=True)
    except gdb.error:
        return []
    holes, backed, in_core = [], [], False
    for line in listing.splitlines():
        if re.match(r"\s*(Exec|Object|Core) file", line):
            in_core = line.strip().startswith("Core file")
            continue
        m = re.match(r"\s*\[\s*\d+\]\s+(0x[0-9a-fA-F]+)->(0x[0-9a-fA-F]+) at \S+: (\S+)\s*(.*)", line)
        if not m:
            continue
        start, end, flags = int(m.group(1), 16), int(m.group(2), 16), m.group(4).split()
        if in_core and m.group(3).startswith("load") and "HAS_CONTENTS" not in flags:
            holes.append((start, end))
        elif not in_core and "HAS_CONTENTS" in flags and "ALLOC" in flags:
            backed.append((start, end))
    # Keep the parts of each hole no file section covers.
    result = []
    for start, end in holes:
        pieces = [(start, end)]
        for bs, be in backed:
            pieces = [p for a, b in pieces
                      for p in ((a, min(b, bs)), (max(a, be), b)) if p[0] < p[1]]
        result += pieces
    return result


def descriptor_address():
    """The address of arenalloc_debug_descriptor in the target, from the
    minimal (dynamic) symbol tables: no debugging information needed."""
    try:
        # A data symbol without debugging information has no type; its
        # address, cast, still evaluates.
        return int(gdb.parse_and_eval("(unsigned long)&%s" % DESCRIPTOR_SYMBOL))
    except gdb.error:
        pass
    # A library built --with-symbol-prefix exports PREFIXarenalloc_debug_descriptor.
    try:
        listing = gdb.execute("info variables %s$" % DESCRIPTOR_SYMBOL, to_string=True)
    except gdb.error:
        listing = ""
    for line in listing.splitlines():
        m = re.match(r"\s*(0x[0-9a-fA-F]+)\s+(\w*%s)\s*$" % DESCRIPTOR_SYMBOL, line)
        if m:
            return int(m.group(1), 16)
    raise ArenallocError("no arenalloc in this program: no symbol %s "
                         "(is it using arenalloc, and is the library loaded?)"
                         % DESCRIPTOR_SYMBOL)


class Heap:
    """One walker over the selected inferior, open for one command."""

    def __init__(self):
        inferior = gdb.selected_inferior()
        if inferior is None or (inferior.pid == 0 and not _has_core()):
            raise ArenallocError("no process and no core file: start or attach to the "
                                 "program, or load a core file, first")
        self.lib = walker_library()
        self.memory = PageCache(inferior, core_holes() if _has_core() else ())
        self.failed = None

        def read(ctx, addr, buf, length):
            try:
                data = self.memory.read(addr, length)
                ctypes.memmove(buf, data, length)
                return 0
            except Exception as e:  # anything: the walker reports the address
                self.failed = str(e)
                return 1

        self._read = READ_FN(read)  # kept alive as long as the walker
        err = ctypes.create_string_buffer(512)
        self.w = self.lib.aa_walker_open(self._read, None, descriptor_address(), err,
                                         ctypes.sizeof(err))
        if not self.w:
            raise ArenallocError(err.value.decode(errors="replace"))

    def close(self):
        if self.w:
            self.lib.aa_walker_close(self.w)
            self.w = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def error(self):
        return self.lib.aa_walker_error(self.w).decode(errors="replace")

    def check(self, rc):
        if rc < 0:
            raise ArenallocError(self.error())
        return rc

    def text(self, ptr):
        """A string the walker made, given back to it."""
        if not ptr:
            raise ArenallocError(self.error())
        try:
            return ctypes.string_at(ptr).decode(errors="replace")
        finally:
            self.lib.aa_walker_free_string(ptr)

    def config(self):
        c = AaConfig()
        self.check(self.lib.aa_walker_config(self.w, ctypes.byref(c)))
        return c

    def arena(self, i):
        a = AaArenaStats()
        return a if self.check(self.lib.aa_walker_arena(self.w, i, ctypes.byref(a))) else None

    def bin(self, arena, b):
        s = AaBinStats()
        return s if self.check(self.lib.aa_walker_bin(self.w, arena, b, ctypes.byref(s))) else None

    def _collect(self, fn, cbtype, *args):
        items = []

        def cb(ctx, info):
            items.append(type(info.contents).from_buffer_copy(info.contents))
            return 0

        self.check(fn(self.w, *args, cbtype(cb), None))
        return items

    def chunks(self):
        return self._collect(self.lib.aa_walker_chunks, CHUNK_CB)

    def runs(self, chunk):
        return self._collect(self.lib.aa_walker_runs, RUN_CB, chunk)

    def huge(self):
        return self._collect(self.lib.aa_walker_huge, HUGE_CB)


def _has_core():
    """Whether the selected inferior is a core file."""
    connection = getattr(gdb.selected_inferior(), "connection", None)  # gdb 11 on
    if connection is not None:
        return connection.type == "core"
    try:
        return "core dump file" in gdb.execute("info target", to_string=True)
    except gdb.error:
        return False


# --- the commands --------------------------------------------------------------

def _options(arg, allowed):
    """Splits leading -options off arg; returns (set of options, rest)."""
    opts = set()
    words = arg.split()
    while words and words[0].startswith("-") and not re.match(r"-\d", words[0]):
        w = words.pop(0)
        if w == "--":
            break
        if w not in allowed:
            raise ArenallocError("unknown option %s (allowed: %s)" % (w, " ".join(sorted(allowed))))
        opts.add(w)
    return opts, " ".join(words)


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0


if gdb is not None:

    class _Subcommand(gdb.Command):
        """Base: runs body(heap, arg) and turns every failure into one line."""

        def __init__(self, name):
            super().__init__("arenalloc " + name, gdb.COMMAND_DATA)

        def invoke(self, arg, from_tty):
            self.dont_repeat()
            try:
                with Heap() as heap:
                    self.body(heap, arg)
            except ArenallocError as e:
                raise gdb.GdbError("arenalloc: %s" % e)
            except gdb.GdbError:
                raise
            except (gdb.error, gdb.MemoryError) as e:
                raise gdb.GdbError("arenalloc: %s" % e)
            except Exception as e:  # a bug here: still one line, no traceback
                raise gdb.GdbError("arenalloc: internal error: %s: %s" % (type(e).__name__, e))

    class ArenallocPrefix(gdb.Command):
        """Inspect the arenalloc heap of the program (live or core file).

arenalloc stats [-json] [-brief]  the statistics report (as malloc_stats_print)
arenalloc arenas                  one line per arena
arenalloc bins [ARENA]            the small size classes in use, per arena
arenalloc chunks [-runs]          the chunks (with their runs) and the huge blocks
arenalloc find [-json] ADDRESS    the block holding ADDRESS: start, size class, state
arenalloc verify [-json]          check the heap; ends with "heap OK" or what is wrong

The heap is found through the exported symbol arenalloc_debug_descriptor
(no debugging information needed) and read by libarenalloc_walker.so."""

        def __init__(self):
            super().__init__("arenalloc", gdb.COMMAND_DATA, gdb.COMPLETE_COMMAND, True)

        def invoke(self, arg, from_tty):
            gdb.execute("help arenalloc", from_tty)

    class StatsCommand(_Subcommand):
        """The heap's statistics report, the figures malloc_stats_print gives.
Usage: arenalloc stats [-json] [-brief]
-json: the JSON form; -brief: without the per-class tables."""

        def __init__(self):
            super().__init__("stats")

        def body(self, heap, arg):
            opts, rest = _options(arg, {"-json", "-brief"})
            if rest:
                raise ArenallocError("stats takes no argument: " + rest)
            flags = AA_REPORT_JSON if "-json" in opts else 0
            if "-brief" in opts:
                flags |= AA_REPORT_NO_BINS | AA_REPORT_NO_LARGE
            gdb.write(heap.text(heap.lib.aa_walker_report(heap.w, flags)))

    class ArenasCommand(_Subcommand):
        """One line per arena: its memory, allocations and frees.
Columns: threads, chunks, mapped, active and dirty bytes, bytes allocated in
small and large blocks, allocations and frees served.
Usage: arenalloc arenas"""

        def __init__(self):
            super().__init__("arenas")

        def body(self, heap, arg):
            if arg.strip():
                raise ArenallocError("arenas takes no argument")
            cfg = heap.config()
            rows = []
            for i in range(cfg.narenas):
                a = heap.arena(i)
                if a is not None:
                    rows.append(a)
            gdb.write("%d arena slots, %d in use\n" % (cfg.narenas, len(rows)))
            if not rows:
                return
            fmt = "%5s %-18s %7s %6s %12s %12s %12s %12s %12s %10s %10s\n"
            gdb.write(fmt % ("arena", "address", "threads", "chunks", "mapped", "active",
                             "dirty", "small", "large", "nmalloc", "ndalloc"))
            for a in rows:
                gdb.write(fmt % (a.index, "%#x" % a.address, a.nthreads, a.nchunks, a.mapped,
                                 a.active, a.dirty, a.allocated_small, a.allocated_large,
                                 a.nmalloc_small + a.nmalloc_large,
                                 a.ndalloc_small + a.ndalloc_large))
                if a.lock_held:
                    gdb.write("      (stopped holding arena %d's lock: its figures may be "
                              "caught mid-update)\n" % a.index)

    class BinsCommand(_Subcommand):
        """The small size classes an arena has used (every arena without ARENA).
Usage: arenalloc bins [ARENA]"""

        def __init__(self):
            super().__init__("bins")

        def body(self, heap, arg):
            cfg = heap.config()
            if arg.strip():
                try:
                    which = [int(gdb.parse_and_eval(arg))]
                except gdb.error as e:
                    raise ArenallocError("bins: not an arena number: %s (%s)" % (arg, e))
                if not 0 <= which[0] < cfg.narenas or heap.arena(which[0]) is None:
                    raise ArenallocError("no arena %s (arenas in use: %s)" % (
                        arg.strip(), ", ".join(str(i) for i in range(cfg.narenas)
                                               if heap.arena(i) is not None) or "none"))
            else:
                which = [i for i in range(cfg.narenas) if heap.arena(i) is not None]
            fmt = "%4s %8s %6s %9s %10s %10s %10s %8s %8s %8s\n"
            for i in which:
                gdb.write("arena %d:\n" % i)
                gdb.write(fmt % ("bin", "size", "nregs", "run_size", "nmalloc", "ndalloc",
                                 "nrequests", "curregs", "curruns", "nruns"))
                shown = 0
                for b in range(cfg.nbins):
                    s = heap.bin(i, b)
                    if s is None or (s.nmalloc == 0 and s.curruns == 0 and s.nruns == 0):
                        continue
                    shown += 1
                    gdb.write(fmt % (s.bin, s.region_size, s.nregs, s.run_size, s.nmalloc,
                                     s.ndalloc, s.nrequests, s.curregs, s.curruns, s.nruns))
                if shown == 0:
                    gdb.write("  (no small class used)\n")

    class ChunksCommand(_Subcommand):
        """The arenas' chunks and the huge blocks.
Usage: arenalloc chunks [-runs]
-runs: also every run of every chunk (free, small with its class and free
regions, large)."""

        def __init__(self):
            super().__init__("chunks")

        def body(self, heap, arg):
            opts, rest = _options(arg, {"-runs"})
            if rest:
                raise ArenallocError("chunks takes no argument: " + rest)
            chunks = heap.chunks()
            gdb.write("%d chunk%s\n" % (len(chunks), "" if len(chunks) == 1 else "s"))
            for c in chunks:
                gdb.write("chunk %#x  %s  arena %d  %d pages (%d header, %d free)%s\n" % (
                    c.address, _size(c.size), c.arena_index, c.npages, c.header_pages,
                    c.nfree_pages, "  sbrk" if c.from_sbrk else ""))
                if "-runs" not in opts:
                    continue
                for r in heap.runs(c.address):
                    state = RUN_STATES.get(r.state, "?")
                    if r.state == 1:
                        what = "class %d (%d bytes), %d of %d regions free" % (
                            r.size_class, r.region_size, r.nfree, r.nregs)
                    elif r.state == 2:
                        what = "class %d, %d bytes" % (r.size_class, r.region_size)
                    else:
                        what = "%d dirty" % r.ndirty
                    gdb.write("  run %#x  %4d pages  %-5s  %s\n" % (r.address, r.npages,
                                                                   state, what))
            huge = heap.huge()
            gdb.write("%d huge block%s\n" % (len(huge), "" if len(huge) == 1 else "s"))
            for h in huge:
                gdb.write("huge %#x  %d bytes (%s mapped)  arena %#x\n" % (
                    h.address, h.usize, _size(h.mapped), h.arena_address))

    class FindCommand(_Subcommand):
        """What an address is: its block's start, size class and state.
The state in words: allocated, free, in a thread cache, huge (a live huge
block), chunk header, free pages, unused.
Usage: arenalloc find [-json] ADDRESS
ADDRESS is any expression (a pointer variable, $rax, 0x7f...)."""

        def __init__(self):
            super().__init__("find")

        def body(self, heap, arg):
            opts, rest = _options(arg, {"-json"})
            if not rest:
                raise ArenallocError("usage: arenalloc find [-json] ADDRESS")
            try:
                value = gdb.parse_and_eval(rest)
                if value.type.strip_typedefs().code == gdb.TYPE_CODE_ARRAY:
                    value = value.address
                addr = int(value)
            except gdb.error as e:
                raise ArenallocError("find: not an address: %s (%s)" % (rest, e))
            addr &= (1 << 64) - 1
            flags = AA_REPORT_JSON if "-json" in opts else 0
            gdb.write(heap.text(heap.lib.aa_walker_find_report(heap.w, addr, flags)))

    class VerifyCommand(_Subcommand):
        """Check the heap's invariants; ends with "heap OK" or what is wrong.
Checks every invariant the walker knows (page maps, run bitmaps and counts,
bins, free lists, totals, the chunk registry, thread caches), prints each
problem, then "heap OK" or "heap CORRUPT: N problems".
Usage: arenalloc verify [-json]"""

        def __init__(self):
            super().__init__("verify")

        def body(self, heap, arg):
            opts, rest = _options(arg, {"-json"})
            if rest:
                raise ArenallocError("verify takes no argument: " + rest)
            flags = AA_REPORT_JSON if "-json" in opts else 0
            gdb.write(heap.text(heap.lib.aa_walker_verify_report(heap.w, flags)))

    # Registering again (the file sourced twice, or auto-loaded for a second
    # program) replaces the commands: harmless.
    ArenallocPrefix()
    StatsCommand()
    ArenasCommand()
    BinsCommand()
    ChunksCommand()
    FindCommand()
    VerifyCommand()
