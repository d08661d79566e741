/*
 * sys/mdb_modapi.h — a STAND-IN for illumos's mdb module API header,
 * declaring exactly what contrib/mdb/arenalloc_mdb.cc uses and nothing
 * else, so that the module keeps compiling on a machine without mdb
 * (tests/mdb/fake_mdb builds it against this file and runs its dcmds).
 *
 * The declarations follow illumos-gate's
 * usr/src/cmd/mdb/common/mdb/mdb_modapi.h (installed as
 * /usr/include/sys/mdb_modapi.h): the same names, types, member order and
 * values.  A use of anything not declared here fails to compile, which is
 * the point: add it here only after checking it there.
 */
#ifndef ARENALLOC_STUB_MDB_MODAPI_H
#define ARENALLOC_STUB_MDB_MODAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From illumos's <sys/types.h>, which Linux's lacks. */
typedef unsigned int uint_t;
typedef unsigned short ushort_t;

/* From <gelf.h> (GElf_Sym is Elf64_Sym there). */
typedef struct {
    uint32_t st_name;
    unsigned char st_info;
    unsigned char st_other;
    uint16_t st_shndx;
    uint64_t st_value;
    uint64_t st_size;
} GElf_Sym;

#ifndef TRUE
#define TRUE 1
#endif

#define MDB_API_VERSION 3

#define DCMD_ADDRSPEC 0x01

#define DCMD_OK 0
#define DCMD_ERR 1
#define DCMD_USAGE 2

typedef enum {
    MDB_TYPE_STRING,
    MDB_TYPE_IMMEDIATE,
    MDB_TYPE_CHAR
} mdb_type_t;

typedef struct mdb_arg {
    mdb_type_t a_type;
    union {
        const char *a_str;
        uintmax_t a_val;
        char a_char;
    } a_un;
} mdb_arg_t;

typedef int mdb_dcmd_f(uintptr_t, uint_t, int, const mdb_arg_t *);

typedef struct mdb_dcmd {
    const char *dc_name;
    const char *dc_usage;
    const char *dc_descr;
    mdb_dcmd_f *dc_funcp;
    void (*dc_help)(void);
} mdb_dcmd_t;

#define WALK_ERR -1
#define WALK_NEXT 0
#define WALK_DONE 1

typedef int (*mdb_walk_cb_t)(uintptr_t, const void *, void *);

typedef struct mdb_walk_state {
    mdb_walk_cb_t walk_callback;
    void *walk_cbdata;
    uintptr_t walk_addr;
    void *walk_data;
    void *walk_arg;
    const void *walk_layer;
} mdb_walk_state_t;

typedef struct mdb_walker {
    const char *walk_name;
    const char *walk_descr;
    int (*walk_init)(mdb_walk_state_t *);
    int (*walk_step)(mdb_walk_state_t *);
    void (*walk_fini)(mdb_walk_state_t *);
    void *walk_init_arg;
} mdb_walker_t;

typedef struct mdb_modinfo {
    ushort_t mi_dvers;
    const mdb_dcmd_t *mi_dcmds;
    const mdb_walker_t *mi_walkers;
} mdb_modinfo_t;

extern ssize_t mdb_vread(void *, size_t, uintptr_t);

extern int mdb_lookup_by_name(const char *, GElf_Sym *);

#define MDB_OPT_SETBITS 1

extern int mdb_getopts(int, const mdb_arg_t *, ...);

extern void mdb_printf(const char *, ...);
extern void mdb_warn(const char *, ...);

#ifdef __cplusplus
}
#endif

#endif
