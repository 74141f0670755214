/*
 * mpich-nbrma: window objects the component makes locally, without a
 * collective creation (dynamic/memhandle_win.c, duplicate/dup_win.c). MPICH
 * 4.0.2's win_init (mpidig_win.c) is static and collective: this sets the
 * generic fields as it does.
 */

#ifndef NBRMA_WINDOW_OBJECT_H_INCLUDED
#define NBRMA_WINDOW_OBJECT_H_INCLUDED

/* A window object with `parent`'s communicator and error handler (errors of
 * the parent's handles were reported there too), one reference each, unified
 * model, no attributes or name, a zeroed device part; the caller sets base,
 * size, disp_unit, create_flavor and what of the device part it needs. */
int MPIDI_NBRMA_window_object_create(MPIR_Win * parent, MPIR_Win ** win_out);
/* Gives back what window_object_create took, and the object. */
void MPIDI_NBRMA_window_object_free(MPIR_Win * win);

#endif /* NBRMA_WINDOW_OBJECT_H_INCLUDED */
