/*
 * mpich-nbrma: shared memory that other processes of the host attach by a
 * key (shared_segment.h).
 */

#define _GNU_SOURCE     /* getrandom */
#include "shared_segment.h"

#include <stdbool.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

/* Before the usable bytes, one cache line. */
typedef struct {
    nbrma_segment_key_t key;
    char pad[64 - sizeof(nbrma_segment_key_t)];
} header_t;

_Static_assert(sizeof(header_t) == 64, "the usable bytes stay 64-byte aligned");

static header_t *header_of(const void *memory)
{
    return (header_t *) ((char *) memory - sizeof(header_t));
}

/* Random where the kernel gives randomness; else as unlikely to repeat. */
static uint64_t new_cookie(void)
{
    static uint64_t made;
    uint64_t cookie = 0;
    struct timespec now;

    if (getrandom(&cookie, sizeof(cookie), GRND_NONBLOCK) != (ssize_t) sizeof(cookie)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        cookie = ((uint64_t) getpid() << 40) ^ (uint64_t) now.tv_nsec ^
            ((uint64_t) now.tv_sec << 20) ^ (++made * 0x9e3779b97f4a7c15u);
    }
    return cookie ? cookie : 1;
}

void *nbrma_segment_create(size_t bytes)
{
    int shmid = shmget(IPC_PRIVATE, sizeof(header_t) + bytes, IPC_CREAT | IPC_EXCL | 0600);
    header_t *h;

    if (shmid < 0)
        return NULL;
    h = shmat(shmid, NULL, 0);
    /* removed now: gone when the last process detaches, whatever happens */
    (void) shmctl(shmid, IPC_RMID, NULL);
    if (h == (void *) -1)
        return NULL;
    /* fresh System V pages are zero */
    h->key.shmid = shmid;
    h->key.cookie = new_cookie();
    h->key.bytes = bytes;
    return h + 1;
}

nbrma_segment_key_t nbrma_segment_key(const void *memory)
{
    return header_of(memory)->key;
}

void *nbrma_segment_attach(const nbrma_segment_key_t * key)
{
    struct shmid_ds stat;
    header_t *h;

    if (key->shmid < 0 || key->shmid > INT32_MAX || key->cookie == 0 ||
        key->bytes > SIZE_MAX - sizeof(header_t) ||
        shmctl((int) key->shmid, IPC_STAT, &stat) != 0 ||
        stat.shm_segsz < sizeof(header_t) + key->bytes)
        return NULL;
    h = shmat((int) key->shmid, NULL, 0);
    if (h == (void *) -1)
        return NULL;
    if (memcmp(&h->key, key, sizeof(*key)) != 0) {
        (void) shmdt(h);
        return NULL;
    }
    return h + 1;
}

void nbrma_segment_detach(void *memory)
{
    (void) shmdt(header_of(memory));
}
