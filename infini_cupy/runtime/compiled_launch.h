/* runtime/compiled_launch.c: a GPU's launches through the driver (INFINI_CUPY_LAUNCH=compiled),
 * for runtime/hot_calls.c, which finds the plans and builds the module. */
#ifndef INFINI_CUPY_COMPILED_LAUNCH_H
#define INFINI_CUPY_COMPILED_LAUNCH_H

#include "hot_arrays.h"

/* A GPU's launches from their launch records, and the mechanism's module functions and
 * constants (added to the module by PyInit_hot_calls). */
PyObject *run_compiled(PyObject *known, PyObject *record, PyObject *b, PyObject *const *natives,
                       const unsigned long long *address, PyObject *scalar, long scalar_at,
                       PyObject *out_array);
PyObject *run_fused_compiled(PyObject *prepared, PyObject *record, PyObject *operands,
                             PyObject *out_array);
int add_compiled_launch(PyObject *m);

#endif
