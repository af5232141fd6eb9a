/* runtime/float_range.c: the range check of a float -> integer cast on the cpu device, for
 * runtime/hot_calls.c (the module that exports it). */
#ifndef INFINI_CUPY_FLOAT_RANGE_H
#define INFINI_CUPY_FLOAT_RANGE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* floats_within(x, low, high): True or False, or None where it cannot tell (see the .c). */
PyObject *floats_within(PyObject *self, PyObject *const *args, Py_ssize_t n);

#endif
