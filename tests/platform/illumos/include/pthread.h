/* Stub of illumos <pthread.h>: what pthread_create(3C),
 * pthread_attr_init(3C), pthread_atfork(3C), pthread_self(3C),
 * pthread_key_create(3C), pthread_setspecific(3C) and the
 * pthread_mutex_*(3C) pages give; the types are in <sys/types.h>. */
#ifndef STUB_PTHREAD_H
#define STUB_PTHREAD_H
#include <sys/types.h>

#define PTHREAD_CREATE_DETACHED 0x40
#define PTHREAD_PROCESS_PRIVATE 0
#define _MUTEX_MAGIC 0x4d58
#define PTHREAD_MUTEX_INITIALIZER \
    {{0, 0, 0, PTHREAD_PROCESS_PRIVATE, _MUTEX_MAGIC}, {{{0}}}, 0}

#ifdef __cplusplus
extern "C" {
#endif
extern int pthread_atfork(void (*)(void), void (*)(void), void (*)(void));
extern int pthread_attr_init(pthread_attr_t *);
extern int pthread_attr_destroy(pthread_attr_t *);
extern int pthread_attr_setdetachstate(pthread_attr_t *, int);
extern int pthread_create(pthread_t *__restrict, const pthread_attr_t *__restrict,
                          void *(*)(void *), void *__restrict);
extern pthread_t pthread_self(void);
extern int pthread_key_create(pthread_key_t *, void (*)(void *));
extern int pthread_setspecific(pthread_key_t, const void *);
extern int pthread_mutex_init(pthread_mutex_t *__restrict, const pthread_mutexattr_t *__restrict);
extern int pthread_mutex_lock(pthread_mutex_t *);
extern int pthread_mutex_trylock(pthread_mutex_t *);
extern int pthread_mutex_unlock(pthread_mutex_t *);
#ifdef __cplusplus
}
#endif
#endif
