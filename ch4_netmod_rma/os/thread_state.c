/*
 * mpich-nbrma: a thread's state and CPU time (thread_state.h).
 */

#define _GNU_SOURCE     /* syscall, SYS_gettid */
#include "thread_state.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* The start of a stat line: the state lies within it, the name having at
 * most 15 characters (TASK_COMM_LEN); the fields after it hold no ')'. */
#define STAT_PREFIX_BYTES 255

int nbrma_thread_state_parse(const char *stat_line)
{
    /* the name's parentheses may nest or be unbalanced; the state follows
     * the last one */
    const char *paren = strrchr(stat_line, ')');

    if (paren == NULL || paren[1] == '\0')
        return -1;
    return (unsigned char) paren[2];
}

int nbrma_thread_state_open_self(void)
{
    char stat_path[64];

    snprintf(stat_path, sizeof(stat_path), "/proc/self/task/%ld/stat", (long) syscall(SYS_gettid));
    return open(stat_path, O_RDONLY | O_CLOEXEC);
}

bool nbrma_thread_state_runnable(int stat_fd)
{
    char line[STAT_PREFIX_BYTES + 1];
    /* pread: the descriptor stays at offset 0 and may be shared by readers */
    ssize_t n = pread(stat_fd, line, sizeof(line) - 1, 0);
    int state;

    if (n <= 0)
        return true;
    line[n] = '\0';
    state = nbrma_thread_state_parse(line);
    return state < 0 || state == 'R';
}

uint64_t nbrma_thread_cpu_ns(void)
{
    struct timespec t;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}
