/*
 * The operation families of the OSU-compatible benchmarks: what each issues,
 * how it prepares the window and buffers of a size, and how it checks what
 * its operations left (see struct osu_op in osu_rma_common.h).
 */
#include "osu_rma_common.h"
#include <stdlib.h>
#include <string.h>

/* --- put ---
 * osu_put_latency of OSU 7.4, with the patch-set's nonblocking
 * synchronization modes (osu_rma_common.h lists the options). The target
 * checks, after each size, that its window holds the origin's data.
 */

static char put_fill_of(int rank, size_t size)
{
    return (char) (1 + (size * 3 + (size_t) rank) % 200);
}

static void put_prepare(struct osu_run *r)
{
    memset(r->sbuf, put_fill_of(r->rank, r->size), r->size);
}

static int put_issue(struct osu_run *r, int target)
{
    return MPI_Put(r->sbuf, (int) r->size, MPI_CHAR, target, osu_disp(r), (int) r->size, MPI_CHAR,
                   r->win);
}

static long put_check(struct osu_run *r, long received, long issued)
{
    long wrong = 0;
    (void) issued;
    for (size_t i = 0; received && i < r->size; i++)
        wrong += r->win_mem[i] != put_fill_of(1 - r->rank, r->size);
    return wrong;
}

const struct osu_op osu_op_put = {
    .call = "MPI_Put",.title = "OSU MPI_Put Latency Test",.lock_type = MPI_LOCK_SHARED,
    .prepare = put_prepare,.issue = put_issue,.check = put_check
};

/* --- get ---
 * osu_get_latency of OSU 7.4, with the patch-set's nonblocking
 * synchronization modes (osu_rma_common.h lists the options). The origin
 * checks, after each size, that it fetched the target's window.
 */

static char get_fill_of(int rank, size_t size)
{
    return (char) (1 + (size * 5 + (size_t) rank) % 200);
}

static void get_prepare(struct osu_run *r)
{
    memset(r->win_mem, get_fill_of(r->rank, r->size), r->size);
}

static int get_issue(struct osu_run *r, int target)
{
    return MPI_Get(r->rbuf, (int) r->size, MPI_CHAR, target, osu_disp(r), (int) r->size,
                   MPI_CHAR, r->win);
}

static long get_check(struct osu_run *r, long received, long issued)
{
    long wrong = 0;
    (void) received;
    for (size_t i = 0; issued && i < r->size; i++)
        wrong += r->rbuf[i] != get_fill_of(1 - r->rank, r->size);
    return wrong;
}

const struct osu_op osu_op_get = {
    .call = "MPI_Get",.title = "OSU MPI_Get latency Test",.lock_type = MPI_LOCK_SHARED,
    .prepare = get_prepare,.issue = get_issue,.check = get_check
};

/* --- acc ---
 * osu_acc_latency of OSU 7.4 (MPI_Accumulate with MPI_SUM on MPI_CHAR, its
 * default datatype), with the patch-set's nonblocking synchronization modes
 * (osu_rma_common.h lists the options). Every operation adds 1 to each byte
 * of the target's window; the target checks, after each size, that each byte
 * holds the number of operations it received (modulo 256).
 */

static void acc_prepare(struct osu_run *r)
{
    memset(r->sbuf, 1, r->size);
    memset(r->win_mem, 0, r->size);
}

static int acc_issue(struct osu_run *r, int target)
{
    return MPI_Accumulate(r->sbuf, (int) r->size, MPI_CHAR, target, osu_disp(r),
                          (int) r->size, MPI_CHAR, MPI_SUM, r->win);
}

static long acc_check(struct osu_run *r, long received, long issued)
{
    long wrong = 0;
    (void) issued;
    for (size_t i = 0; i < r->size; i++)
        wrong += (unsigned char) r->win_mem[i] != (unsigned char) received;
    return wrong;
}

const struct osu_op osu_op_acc = {
    .call = "MPI_Accumulate",.title = "OSU MPI_Accumulate latency Test",.datatype = "MPI_CHAR",
    .lock_type = MPI_LOCK_SHARED,.prepare = acc_prepare,.issue = acc_issue,.check = acc_check
};

/* --- fop ---
 * osu_fop_latency of OSU 7.4 (MPI_Fetch_and_op, MPI_SUM on one MPI_CHAR: one
 * row of size 1; exclusive lock in the lock modes), with the patch-set's
 * nonblocking synchronization modes (osu_rma_common.h lists the options).
 * Every operation adds 1; afterwards the target's byte holds the number of
 * operations it received and the origin's last fetched value one less
 * (modulo 256).
 */

static void fop_prepare(struct osu_run *r)
{
    r->sbuf[0] = 1;
    r->win_mem[0] = 0;
}

static int fop_issue(struct osu_run *r, int target)
{
    return MPI_Fetch_and_op(r->sbuf, r->rbuf, MPI_CHAR, target, osu_disp(r), MPI_SUM, r->win);
}

static long fop_check(struct osu_run *r, long received, long issued)
{
    /* a ping-pong's peer fetches after this rank's operations landed too, so
     * the fetched value is checked only where the peer issued none */
    long wrong = (unsigned char) r->win_mem[0] != (unsigned char) received;
    if (issued && !received)
        wrong += (unsigned char) r->rbuf[0] != (unsigned char) (issued - 1);
    return wrong;
}

const struct osu_op osu_op_fop = {
    .call = "MPI_Fetch_and_op",.title = "OSU MPI_Fetch_and_op latency Test",.datatype = "MPI_CHAR",.fixed_size = 1,
    .lock_type = MPI_LOCK_EXCLUSIVE,.prepare = fop_prepare,.issue = fop_issue,.check = fop_check
};

/* --- cas ---
 * osu_cas_latency of OSU 7.4 (MPI_Compare_and_swap on one MPI_CHAR: one row of
 * size 1; exclusive lock in the lock modes), with the patch-set's nonblocking
 * synchronization modes (osu_rma_common.h lists the options). The window
 * starts at 0; each rank swaps in its rank + 1 where it finds 0, so only the
 * first operation into a window swaps: afterwards the window holds the peer's
 * value and every later fetch returned it.
 */

static void cas_prepare(struct osu_run *r)
{
    r->sbuf[0] = (char) (r->rank + 1);
    r->cbuf[0] = 0;
    r->win_mem[0] = 0;
}

static int cas_issue(struct osu_run *r, int target)
{
    return MPI_Compare_and_swap(r->sbuf, r->cbuf, r->rbuf, MPI_CHAR, target, osu_disp(r),
                                r->win);
}

static long cas_check(struct osu_run *r, long received, long issued)
{
    long wrong = received && r->win_mem[0] != (char) (2 - r->rank);
    if (issued > 1)
        wrong += r->rbuf[0] != (char) (r->rank + 1);
    return wrong;
}

const struct osu_op osu_op_cas = {
    .call = "MPI_Compare_and_swap",.title = "OSU MPI_Compare_and_swap latency Test",.datatype = "MPI_CHAR",.fixed_size = 1,
    .lock_type = MPI_LOCK_EXCLUSIVE,.prepare = cas_prepare,.issue = cas_issue,.check = cas_check
};
