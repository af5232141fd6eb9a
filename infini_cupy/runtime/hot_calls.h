/* What runtime/hot_calls.c (the hot path of elementwise calls on Arrays) and
 * runtime/compiled_launch.c (a GPU's launches through the driver, INFINI_CUPY_LAUNCH=compiled)
 * share: the Array's slots, the names and objects configure() was given, and the helpers
 * both take. The two files build into one extension module, hot_calls (runtime/native.py),
 * whose only exported symbol is PyInit_hot_calls (-fvisibility=hidden). */
#ifndef INFINI_CUPY_HOT_CALLS_H
#define INFINI_CUPY_HOT_CALLS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* An Array's slot at byte offset `off` (configure() reads the offsets from the class). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* hot_calls.c: what configure() was given, and the interned names. */
extern PyObject *Array_type, *allocator_var;
extern Py_ssize_t off_a, off_b, off_p, off_k, off_d;

int intern_names(void);
PyObject *layout_key(PyObject *x);
int same_backend(PyObject *b1, PyObject *b2);
int is_numpy(PyObject *b);
unsigned long long as_bits(PyObject *v);
int hooks_state(void);
PyObject *output_array(PyObject *known, PyObject *out, PyObject *b, unsigned long long address,
                       int settled);
PyObject *scalar_seen(PyObject *last, PyObject *made, PyObject *v);
int out_clear(PyObject *check, unsigned long long out_address, const unsigned long long *address,
              long scalar_at);
PyObject *checked_array(PyObject *check, PyObject *operands);

/* compiled_launch.c: a GPU's launches from their launch records, and its module functions
 * and constants (added to the module by PyInit_hot_calls). */
PyObject *run_compiled(PyObject *known, PyObject *record, PyObject *b, PyObject *const *natives,
                       const unsigned long long *address, PyObject *scalar, long scalar_at,
                       PyObject *out_array);
PyObject *run_fused_compiled(PyObject *prepared, PyObject *record, PyObject *operands);
int add_compiled_launch(PyObject *module);

#endif
