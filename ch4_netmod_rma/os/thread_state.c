/*
 * mpich-nbrma: a thread's state and CPU time (thread_state.h).
 */

#define _GNU_SOURCE     /* syscall, SYS_gettid */
#include "thread_state.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* A stat line: about 300 bytes, the name having at most 15 characters
 * (TASK_COMM_LEN); the fields after it hold no ')'. */
#define STAT_LINE_BYTES 511

/* Fields from the state (the 3rd) to the processor (the 39th). */
#define STATE_TO_PROCESSOR 36

int nbrma_thread_state_parse(const char *stat_line)
{
    /* the name's parentheses may nest or be unbalanced; the state follows
     * the last one */
    const char *paren = strrchr(stat_line, ')');

    if (paren == NULL || paren[1] == '\0')
        return -1;
    return (unsigned char) paren[2];
}

int nbrma_thread_state_parse_cpu(const char *stat_line)
{
    const char *paren = strrchr(stat_line, ')');
    const char *p;
    char *end;
    long cpu;

    if (paren == NULL || paren[1] == '\0')
        return -1;
    p = paren + 2;      /* the state */
    for (int field = 0; field < STATE_TO_PROCESSOR; field++) {
        p = strchr(p, ' ');
        if (p == NULL)
            return -1;
        p++;
    }
    cpu = strtol(p, &end, 10);
    if (end == p || (*end != ' ' && *end != '\0' && *end != '\n') || cpu < 0 || cpu > INT_MAX)
        return -1;
    return (int) cpu;
}

int nbrma_thread_state_open_self(void)
{
    char stat_path[64];

    snprintf(stat_path, sizeof(stat_path), "/proc/self/task/%ld/stat", (long) syscall(SYS_gettid));
    return open(stat_path, O_RDONLY | O_CLOEXEC);
}

nbrma_thread_view nbrma_thread_state_read(int stat_fd)
{
    char line[STAT_LINE_BYTES + 1];
    /* pread: the descriptor stays at offset 0 and may be shared by readers */
    ssize_t n = pread(stat_fd, line, sizeof(line) - 1, 0);
    nbrma_thread_view view = {.runnable = true,.cpu = -1 };
    int state;

    if (n <= 0)
        return view;
    line[n] = '\0';
    state = nbrma_thread_state_parse(line);
    view.runnable = state < 0 || state == 'R';
    view.cpu = nbrma_thread_state_parse_cpu(line);
    return view;
}

uint64_t nbrma_thread_cpu_ns(void)
{
    struct timespec t;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}
