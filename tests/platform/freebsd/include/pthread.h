/* Stub of FreeBSD <pthread.h>: what pthread_create(3), pthread_attr(3),
 * pthread_atfork(3), pthread_key_create(3), pthread_setspecific(3) and the
 * pthread_mutex_*(3) pages give.  On FreeBSD the
 * pthread types are pointers to opaque structures, so a statically
 * initialized mutex is a null pointer. */
#ifndef STUB_PTHREAD_H
#define STUB_PTHREAD_H
#include <sys/types.h>

typedef struct pthread *pthread_t;
typedef struct pthread_attr *pthread_attr_t;
typedef struct pthread_mutex *pthread_mutex_t;
typedef struct pthread_mutex_attr *pthread_mutexattr_t;
typedef int pthread_key_t;

#define PTHREAD_CREATE_DETACHED 1
#define PTHREAD_MUTEX_INITIALIZER NULL

#ifdef __cplusplus
extern "C" {
#endif
int pthread_atfork(void (*)(void), void (*)(void), void (*)(void));
int pthread_attr_init(pthread_attr_t *);
int pthread_attr_destroy(pthread_attr_t *);
int pthread_attr_setdetachstate(pthread_attr_t *, int);
int pthread_create(pthread_t *__restrict, const pthread_attr_t *__restrict,
                   void *(*)(void *), void *__restrict);
int pthread_key_create(pthread_key_t *, void (*)(void *));
int pthread_setspecific(pthread_key_t, const void *);
int pthread_mutex_init(pthread_mutex_t *__restrict, const pthread_mutexattr_t *__restrict);
int pthread_mutex_lock(pthread_mutex_t *);
int pthread_mutex_trylock(pthread_mutex_t *);
int pthread_mutex_unlock(pthread_mutex_t *);
#ifdef __cplusplus
}
#endif
#endif
