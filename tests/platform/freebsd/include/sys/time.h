/* Stub of FreeBSD <sys/time.h>: utrace(2) lists it in its SYNOPSIS; the
 * platform layer uses nothing from it. */
