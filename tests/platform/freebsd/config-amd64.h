/* lib/config.h as configure would write it for FreeBSD 14 (amd64) against
 * the stub headers of include/, in configure's form: every name of
 * lib/config.h.in but the package boilerplate (PACKAGE_*, VERSION,
 * LT_OBJDIR, STDC_HEADERS, which tests/platform/compile_test takes from
 * this build's config.h) is defined or left as an "#undef" comment, and
 * compile_test fails when configure.ac gains a name decided in neither way
 * here.  A function or flag is found when the stubs declare it, and they
 * declare only what the library uses on FreeBSD (so secure_getenv and
 * getrandom, which only platform_linux.cc calls, are not found); the
 * standard headers of AC_INCLUDES_DEFAULT all exist there.  The malloc
 * contract and the threaded flag are configure's defaults for a freebsd
 * host. */
#define ARENALLOC_DEBUG 0
#define ARENALLOC_FREE_CHECKS 1
#define ARENALLOC_HARDENED_DEFAULT 0
#define ARENALLOC_ISTHREADED __isthreaded
#define ARENALLOC_MEMALIGN_ROUNDS_UP 0
#define ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO 0
#define ARENALLOC_REALLOC_ZERO_FREES 0
/* #undef ARENALLOC_SANITIZED */
#define ARENALLOC_STATS 1
#define HAVE_ARC4RANDOM_BUF 1
#define HAVE_DLFCN_H 1
/* #undef HAVE_GETAUXVAL */
#define HAVE_GETPROGNAME 1
/* #undef HAVE_GETRANDOM */
#define HAVE_INTTYPES_H 1
#define HAVE_ISSETUGID 1
#define HAVE_MADV_DONTNEED 1
#define HAVE_MADV_FREE 1
/* #undef HAVE_MADV_HUGEPAGE */
#define HAVE_MAP_ANON 1
#define HAVE_MAP_ANONYMOUS 1
/* #undef HAVE_MINIX_CONFIG_H */
/* #undef HAVE_MREMAP */
/* #undef HAVE_ON_EXIT */
/* #undef HAVE_PROGRAM_INVOCATION_SHORT_NAME */
#define HAVE_PTHREAD_ATFORK 1
#define HAVE_SBRK 1
/* #undef HAVE_SCHED_GETAFFINITY */
/* #undef HAVE_SECURE_GETENV */
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_TLS_MODEL_INITIAL_EXEC 1
#define HAVE_UNISTD_H 1
#define HAVE_UTRACE 1
#define HAVE_WCHAR_H 1
/* #undef HAVE__IO_LIST_LOCK */
/* #undef HAVE___LIBC_SINGLE_THREADED */
/* #undef HAVE___REGISTER_ATFORK */
#define LG_PAGE 12
#ifndef _ALL_SOURCE
# define _ALL_SOURCE 1
#endif
#ifndef __EXTENSIONS__
# define __EXTENSIONS__ 1
#endif
#ifndef _POSIX_PTHREAD_SEMANTICS
# define _POSIX_PTHREAD_SEMANTICS 1
#endif
