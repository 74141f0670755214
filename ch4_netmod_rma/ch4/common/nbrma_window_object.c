/*
 * mpich-nbrma: window objects made locally (window_object.h).
 */

#include "mpidimpl.h"
#include "nbrma_window_object.h"

int MPIDI_NBRMA_window_object_create(MPIR_Win * parent, MPIR_Win ** win_out)
{
    int mpi_errno = MPI_SUCCESS;
    int thr_err;
    MPIR_Win *win = (MPIR_Win *) MPIR_Handle_obj_alloc(&MPIR_Win_mem);

    MPIR_ERR_CHKANDJUMP(win == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    MPIR_Object_set_ref(win, 1);
    MPID_Thread_mutex_create(&win->mutex, &thr_err);
    MPIR_Assert(thr_err == 0);
    win->errhandler = parent->errhandler;
    if (win->errhandler && !HANDLE_IS_BUILTIN(win->errhandler->handle))
        MPIR_Errhandler_add_ref(win->errhandler);
    win->base = NULL;
    win->size = 0;
    win->disp_unit = 1;
    win->attributes = NULL;
    win->comm_ptr = parent->comm_ptr;
    MPIR_Comm_add_ref(win->comm_ptr);
    win->copyDispUnit = 0;
    win->copySize = 0;
    win->name[0] = '\0';
    win->create_flavor = MPI_WIN_FLAVOR_CREATE;
    win->model = MPI_WIN_UNIFIED;
    win->copyCreateFlavor = 0;
    win->copyModel = 0;
    memset(&win->dev, 0, sizeof(win->dev));
    *win_out = win;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_NBRMA_window_object_free(MPIR_Win * win)
{
    int thr_err;

    if (win->errhandler && !HANDLE_IS_BUILTIN(win->errhandler->handle)) {
        int in_use;
        MPIR_Errhandler_release_ref(win->errhandler, &in_use);
        if (!in_use)
            MPIR_Handle_obj_free(&MPIR_Errhandler_mem, win->errhandler);
    }
    MPIR_Comm_release(win->comm_ptr);
    MPID_Thread_mutex_destroy(&win->mutex, &thr_err);
    MPIR_Assert(thr_err == 0);
    MPIR_Handle_obj_free(&MPIR_Win_mem, win);
}
