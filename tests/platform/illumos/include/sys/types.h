/* Stub of illumos <sys/types.h> (LP64), as types.h(3HEAD) and the
 * pthread_*(3C) pages give it: the types lib/ names, with the pthread
 * types as illumos defines them: pthread_t is an integer id, a mutex a
 * structure whose initializer is nested braces.  size_t comes from the
 * compiler's <stddef.h>. */
#ifndef STUB_SYS_TYPES_H
#define STUB_SYS_TYPES_H
#include <stddef.h>
#include <stdint.h>
typedef long ssize_t;
typedef long off_t;
typedef int pid_t;
typedef long time_t;
typedef int clockid_t;
typedef char *caddr_t;
typedef unsigned int uint_t;
typedef uint64_t upad64_t;

typedef uint_t pthread_t;
typedef uint_t pthread_key_t;
typedef struct _pthread_attr {
    void *__pthread_attrp;
} pthread_attr_t;
typedef struct _pthread_mutex {
    struct {
        uint16_t __pthread_mutex_flag1;
        uint8_t __pthread_mutex_flag2;
        uint8_t __pthread_mutex_ceiling;
        uint16_t __pthread_mutex_type;
        uint16_t __pthread_mutex_magic;
    } __pthread_mutex_flags;
    union {
        struct {
            uint8_t __pthread_mutex_pad[8];
        } __pthread_mutex_lock64;
        struct {
            uint32_t __pthread_ownerpid;
            uint32_t __pthread_lockword;
        } __pthread_mutex_lock32;
        upad64_t __pthread_mutex_owner64;
    } __pthread_mutex_lock;
    upad64_t __pthread_mutex_data;
} pthread_mutex_t;
typedef struct {
    void *__pthread_mutexattrp;
} pthread_mutexattr_t;
#endif
