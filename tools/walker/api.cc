// api.cc — the walker's C interface (arenalloc_walker.h): thin wrappers
// that turn a failed read of the target into -1 and a one-line error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "walker_internal.h"

using namespace walker;

namespace {

char *dup_string(const std::string &s) {
    char *p = static_cast<char *>(malloc(s.size() + 1));
    if (p != nullptr)
        memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

// Runs body, turning a read failure into -1 and the walker's error.
template <typename F>
int guarded(aa_walker *w, F body) {
    try {
        return body();
    } catch (const ReadError &e) {
        w->error = e.what;
        return -1;
    }
}

}  // namespace

// The walker object's type is hidden; its C interface must not be.
#pragma GCC visibility push(default)
extern "C" {

aa_walker *aa_walker_open(aa_read_fn read, void *ctx, uint64_t descriptor_addr, char *err,
                          size_t errlen) {
    aa_walker *w = new aa_walker;
    w->read_fn = read;
    w->ctx = ctx;
    w->desc_addr = descriptor_addr;
    if (!w->open()) {
        if (err != nullptr && errlen != 0)
            snprintf(err, errlen, "%s", w->error.c_str());
        delete w;
        return nullptr;
    }
    return w;
}

void aa_walker_close(aa_walker *w) { delete w; }

const char *aa_walker_error(const aa_walker *w) { return w->error.c_str(); }

int aa_walker_config(aa_walker *w, aa_config *out) {
    *out = aa_config{};
    out->descriptor_version = w->d.version;
    out->page_size = w->d.page_size;
    out->quantum = w->d.quantum;
    out->chunk_size = w->chunk_size;
    out->lg_chunk = w->lg_chunk;
    out->chunk_header_pages = w->header_pages;
    out->nbins = w->d.nbins;
    out->nclasses = w->d.nclasses;
    out->nlarge = w->nlarge;
    out->small_max = w->d.small_max;
    out->large_max = w->large_max;
    out->narenas = w->narenas;
    out->initialized = w->initialized;
    snprintf(out->package_version, sizeof(out->package_version), "%s", w->d.package_version);
    return 0;
}

int aa_walker_totals(aa_walker *w, aa_totals *out) {
    return guarded(w, [&] {
        w->totals(out, nullptr);
        return 0;
    });
}

int aa_walker_arena(aa_walker *w, unsigned arena, aa_arena_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0)
            return 0;
        w->arena_stats(w->arena_obj(a), arena, out);
        return 1;
    });
}

int aa_walker_bin(aa_walker *w, unsigned arena, unsigned bin, aa_bin_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0 || bin >= w->d.nbins)
            return 0;
        w->bin_stats(w->arena_obj(a), bin, out);
        return 1;
    });
}

int aa_walker_large(aa_walker *w, unsigned arena, unsigned lclass, aa_large_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0 || lclass >= w->nlarge)
            return 0;
        w->large_stats(w->arena_obj(a), lclass, out);
        return 1;
    });
}

int aa_walker_chunks(aa_walker *w, int (*cb)(void *, const aa_chunk_info *), void *ctx) {
    return guarded(w, [&] {
        for (unsigned i = 0; w->initialized && i < w->narenas; i++) {
            uint64_t a = w->arena_addr(i);
            if (a == 0)
                continue;
            Obj ar = w->arena_obj(a);
            std::set<uint64_t> seen;
            for (uint64_t c = ar.get(w->d.arena.chunks); c != 0 && seen.insert(c).second;) {
                Obj h = w->obj(c, w->d.chunk.size);
                aa_chunk_info info{c, w->chunk_size, i, a, h.get(w->d.chunk.npages),
                                   h.get(w->d.chunk.header_pages), h.get(w->d.chunk.nfree_pages),
                                   h.get(w->d.chunk.from_sbrk)};
                int rc = cb(ctx, &info);
                if (rc != 0)
                    return rc;
                c = h.get(w->d.chunk.next);
            }
        }
        return 0;
    });
}

int aa_walker_runs(aa_walker *w, uint64_t chunk, int (*cb)(void *, const aa_run_info *), void *ctx) {
    return guarded(w, [&] {
        ChunkM c = w->read_chunk(chunk);
        if (c.magic != w->d.chunk_magic) {
            w->error = hex(chunk) + " is not an arenalloc chunk (bad magic)";
            return -1;
        }
        for (const RunM &r : c.runs) {
            aa_run_info info{};
            info.chunk = chunk;
            info.address = r.base;
            info.npages = r.npages;
            uint64_t tag = c.map[r.first_page] & w->d.page_map.tag_mask;
            info.state = tag == w->d.page_map.tag_small ? AA_RUN_SMALL
                         : tag == w->d.page_map.tag_large ? AA_RUN_LARGE
                                                          : AA_RUN_FREE;
            info.size_class = r.size_class;
            info.region_size = info.state == AA_RUN_SMALL   ? r.region_size
                               : info.state == AA_RUN_LARGE ? uint64_t{r.npages} * w->d.page_size
                                                            : 0;
            info.nregs = info.state == AA_RUN_SMALL ? r.nregs : 0;
            info.nfree = info.state == AA_RUN_SMALL ? r.nfree : 0;
            info.ndirty = info.state == AA_RUN_FREE ? r.ndirty : 0;
            info.descriptor = r.desc;
            int rc = cb(ctx, &info);
            if (rc != 0)
                return rc;
        }
        return 0;
    });
}

int aa_walker_huge(aa_walker *w, int (*cb)(void *, const aa_huge_info *), void *ctx) {
    return guarded(w, [&] {
        for (const HugeM &h : w->read_huge()) {
            aa_huge_info info{h.addr, h.usize, h.mapped, h.arena, h.desc};
            int rc = cb(ctx, &info);
            if (rc != 0)
                return rc;
        }
        return 0;
    });
}

int aa_walker_find(aa_walker *w, uint64_t address, aa_find_result *out) {
    return guarded(w, [&] {
        w->find(address, out);
        return 0;
    });
}

const char *aa_walker_state_name(uint64_t state) { return walker::state_text(state); }

int aa_walker_verify(aa_walker *w, void (*finding)(void *, const char *), void *ctx) {
    return guarded(w, [&] {
        std::vector<std::string> f;
        w->verify(&f);
        if (finding != nullptr)
            for (const std::string &s : f)
                finding(ctx, s.c_str());
        return static_cast<int>(f.size());
    });
}

char *aa_walker_report(aa_walker *w, int flags) {
    std::string s;
    if (guarded(w, [&] {
            s = w->report(flags);
            return 0;
        }) != 0)
        return nullptr;
    return dup_string(s);
}

char *aa_walker_find_report(aa_walker *w, uint64_t address, int flags) {
    std::string s;
    if (guarded(w, [&] {
            s = w->find_report(address, flags);
            return 0;
        }) != 0)
        return nullptr;
    return dup_string(s);
}

char *aa_walker_verify_report(aa_walker *w, int flags) {
    std::vector<std::string> f;
    if (guarded(w, [&] {
            w->verify(&f);
            return 0;
        }) != 0)
        return nullptr;
    return dup_string(walker::verify_report(f, flags));
}

void aa_walker_free_string(char *s) { free(s); }

}  // extern "C"
#pragma GCC visibility pop
