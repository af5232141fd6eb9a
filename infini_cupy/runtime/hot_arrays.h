/* runtime/hot_arrays.c: Arrays as the compiled calls read and make them, for
 * runtime/hot_calls.c (the hot path, the module), runtime/compiled_launch.c (a GPU's
 * launches through the driver) and runtime/cpu_calls.c (the cpu device's repeats). The four
 * build into one extension module, hot_calls (runtime/native.py), whose only exported symbol
 * is PyInit_hot_calls (-fvisibility=hidden). */
#ifndef INFINI_CUPY_HOT_ARRAYS_H
#define INFINI_CUPY_HOT_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* An Array's slot at byte offset `off` (configure() reads the offsets from the class). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* A NumPy array's fields up to its flags (numpy/ndarraytypes.h PyArrayObject_fields, the
 * layout NumPy's ABI keeps): the data pointer follows the object header, as
 * arrays.DATA_FIELD_OFFSET reads it. hot_calls.c's configure() checks the flags on two sample
 * arrays (flags_readable), cpu_calls.c's configure_cpu() the dtype on one. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} numpy_fields;
#define NPY_ARRAY_C_CONTIGUOUS 0x0001 /* numpy/ndarraytypes.h */
#define NPY_ARRAY_F_CONTIGUOUS 0x0002
#define NPY_ARRAY_WRITEABLE 0x0400 /* arrays.NPY_ARRAY_WRITEABLE */
extern int flags_readable;  /* configure() found the flags where numpy_fields has them */

/* What configure() (hot_calls.c) sets, and the helpers. */
extern PyObject *Array_type, *allocator_var, *settle, *learn_out_id, *hooks, *numpy_backend;
extern Py_ssize_t off_a, off_b, off_p, off_k, off_d;

int intern_array_names(void);
/* The byte offset of `type`'s object slot `name`: 0, or -1 with an error set. */
int slot_offset(PyObject *type, const char *name, Py_ssize_t *offset);
PyObject *layout_key(PyObject *x);
PyObject *new_array(PyObject *native, PyObject *b, PyObject *address, PyObject *k);
int hooks_state(void);
PyObject *output_array(PyObject *known, PyObject *out, PyObject *b, unsigned long long address,
                       int settled);
PyObject *returned_outputs(PyObject *known, PyObject *outs, PyObject *b, PyObject *returns,
                           unsigned long long address, int settled);
PyObject *scalar_seen(PyObject *last, PyObject *made, PyObject *v);
PyObject *scalars_seen(PyObject *source, PyObject *operands);
int out_clear(PyObject *check, unsigned long long out_address, const unsigned long long *address,
              Py_ssize_t n, long scalar_at);
PyObject *checked_array(PyObject *check, PyObject *operands);

/* The small checks of every call, inline in each file that makes them. */
static inline int same_backend(PyObject *b1, PyObject *b2) {
    if (b1 == b2)
        return 1;
    if (!PyUnicode_Check(b1) || !PyUnicode_Check(b2))
        return 0;
    return PyUnicode_Compare(b1, b2) == 0;
}

static inline int is_numpy(PyObject *b) { return same_backend(b, numpy_backend); }

static inline unsigned long long as_bits(PyObject *v) {
    /* an address or mask held as a Python int; -1 (all bits) if it is none, so that a
       check on it fails and the call goes the Python way */
    if (v == NULL || !PyLong_Check(v))
        return ~0ULL;
    unsigned long long bits = PyLong_AsUnsignedLongLongMask(v);
    if (bits == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return ~0ULL;
    }
    return bits;
}

#endif
