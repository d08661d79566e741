/* Stub of FreeBSD <sys/_types.h>.  Not included by the platform layer but
 * by GCC's own <stddef.h> whenever __FreeBSD__ is defined; what it takes
 * from it (__rune_t) it uses only with __BSD_VISIBLE, which nothing here
 * defines. */
