/* runtime/cpu_calls.c: the cpu device's repeated elementwise calls, for runtime/hot_calls.c
 * (the module, whose unary, binary and into hand Arrays of the numpy backend over). */
#ifndef INFINI_CUPY_CPU_CALLS_H
#define INFINI_CUPY_CPU_CALLS_H

#include "hot_arrays.h"

/* configure_cpu(plain_calls, plain_calls_into, errstate_var, ignore_all, asarray, sample) */
PyObject *configure_cpu(PyObject *self, PyObject *args);

/* name(*operands) (n of them: native arrays and Python scalars), into `out` (a native array)
 * unless it is NULL, by what numpy_backend learnt for their types: a new Array on backend `b`
 * (out itself for out=), or None for the Python way; NULL on an error. `ndarray_type` is
 * numpy.ndarray. */
PyObject *cpu_call(PyObject *name, PyObject *const *operands, Py_ssize_t n, PyObject *out,
                   PyObject *b, PyObject *ndarray_type);

#endif
