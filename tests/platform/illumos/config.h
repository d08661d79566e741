/* config.h as configure would write it on illumos (amd64), for the syntax
 * check only: the results of the platform checks of configure.ac, not the
 * package boilerplate.  Keep in step with configure.ac. */
#define ARENALLOC_STATS 1
#define HAVE_ARC4RANDOM_BUF 1
#define HAVE_GETRANDOM 1
#define HAVE_ISSETUGID 1
#define HAVE_MADV_DONTNEED 1
#define HAVE_MADV_FREE 1
#define HAVE_MAP_ANON 1
#define HAVE_MAP_ANONYMOUS 1
#define HAVE_PTHREAD_ATFORK 1
#define HAVE_SBRK 1
#define HAVE_TLS_MODEL_INITIAL_EXEC 1
#define LG_PAGE 12
#define __EXTENSIONS__ 1
#define _ALL_SOURCE 1
#define _POSIX_PTHREAD_SEMANTICS 1
