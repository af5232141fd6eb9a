/* runtime/lazy_calls.c: a deferred call inside xp.lazy() whose chain the tape knows, for
 * runtime/hot_calls.c (the module, whose unary and binary hand such calls over). */
#ifndef INFINI_CUPY_LAZY_CALLS_H
#define INFINI_CUPY_LAZY_CALLS_H

#include "hot_arrays.h"

/* configure_lazy(pending's namespace, PendingExpression, Tape, ChainState, pending.lock,
 * pending.register_seen, the scalar types a deferred call takes, the lazy ContextVar, the
 * logger whose DEBUG records name each evaluation) */
PyObject *configure_lazy(PyObject *self, PyObject *args);

/* name(*args) (n of them: Arrays, pending or not, and scalars) deferred on the tape where its
 * chain state knows the call: the deferred Array, or None for the Python way (lazy.defer,
 * which decides as before); NULL on an error. */
PyObject *defer_seen(PyObject *name, PyObject *const *args, Py_ssize_t n);

/* evaluate_seen(): pending.evaluate_all where every live deferred Array is on one tape whose
 * chain state kept the fused function of these outputs: True once computed, None for the
 * Python way (nothing changed), NULL on an error (what was pending stays so). */
PyObject *evaluate_seen(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
