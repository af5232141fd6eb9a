/* Arrays as the compiled calls read and make them: what runtime/hot_calls.c (the hot path),
 * runtime/compiled_launch.c (a GPU's launches through the driver) and runtime/cpu_calls.c
 * (the cpu device's repeats) share. An Array's slots
 * and layout id (settled on first use), a new settled Array over an output, what the launch
 * hooks say of this thread, the bytes kept per scalar object, the rule of out= against its
 * inputs, a fused call's input check. configure() (hot_calls.c) sets what this file reads.
 */
#include "hot_arrays.h"
#ifdef Py_T_OBJECT_EX /* Python 3.12 on */
#define OBJECT_SLOT Py_T_OBJECT_EX
#else
#include <structmember.h>
#define OBJECT_SLOT T_OBJECT_EX
#endif

/* What configure() was given (references held for the life of the process). */
PyObject *Array_type, *allocator_var, *settle, *learn_out_id, *hooks, *numpy_backend;
int flags_readable;
/* Byte offsets of the Array's slots. */
Py_ssize_t off_a, off_b, off_p, off_k, off_d;
static PyObject *recorders_name, *skipping_name, *out_id_name;

/* The names this file reads, made once (configure and set_driver both need them). */
int intern_array_names(void) {
    if (recorders_name != NULL)
        return 0;
    recorders_name = PyUnicode_InternFromString("recorders");
    skipping_name = PyUnicode_InternFromString("skipping");
    out_id_name = PyUnicode_InternFromString("out_id");
    if (!recorders_name || !skipping_name || !out_id_name) {
        Py_CLEAR(recorders_name);  /* tried again at the next call */
        return -1;
    }
    return 0;
}

/* The byte offset of `type`'s object slot `name` (its member descriptor's). */
int slot_offset(PyObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString(type, name);  /* the class's member descriptor */
    if (descr == NULL)
        return -1;
    Py_DECREF(descr);  /* the class holds it */
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%R has no slot %s", type, name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != OBJECT_SLOT) {
        PyErr_Format(PyExc_TypeError, "%R's slot %s is not an object slot", type, name);
        return -1;
    }
    *offset = member->offset;
    return 0;
}

/* The Array's layout id (settling it on first use: boundary's `x._k or settle(x)`), a new
 * reference; NULL with no error set when it has no such slot value. */
PyObject *layout_key(PyObject *x) {
    PyObject *k = SLOT(x, off_k);
    if (k == NULL)
        return NULL;
    int truth = PyObject_IsTrue(k);
    if (truth < 0)
        return NULL;
    if (truth) {
        Py_INCREF(k);
        return k;
    }
    return PyObject_CallOneArg(settle, x);
}

/* What runtime/launch.py's launch() would do with this thread's hooks: 0 launch, 1 skip
 * (the thread skips launches and records none), 2 record (launch() itself must run), -1 on
 * an error. */
int hooks_state(void) {
    PyObject *recorders = PyObject_GetAttr(hooks, recorders_name);
    if (recorders == NULL)
        return -1;
    int recording = PyObject_IsTrue(recorders);
    Py_DECREF(recorders);
    if (recording)
        return recording < 0 ? -1 : 2;
    PyObject *skipping = PyObject_GetAttr(hooks, skipping_name);
    if (skipping == NULL)
        return -1;
    int skip = PyObject_IsTrue(skipping);
    Py_DECREF(skipping);
    return skip;
}

/* A new Array over `native` on backend `b`, settled: pointer `address`, layout id `k`. */
PyObject *new_array(PyObject *native, PyObject *b, PyObject *address, PyObject *k) {
    PyTypeObject *type = (PyTypeObject *)Array_type;
    PyObject *r = type->tp_alloc(type, 0);
    if (r == NULL)
        return NULL;
    Py_INCREF(native);
    SLOT(r, off_a) = native;
    Py_INCREF(b);
    SLOT(r, off_b) = b;
    Py_INCREF(Py_None);
    SLOT(r, off_p) = Py_None;
    Py_XINCREF(address);  /* NULL: unset, as Python leaves `_d` of an unsettled Array */
    SLOT(r, off_d) = address;
    Py_INCREF(k);
    SLOT(r, off_k) = k;
    return r;
}

/* The output's layout id: the plan's, learnt from its first output. New reference. */
static PyObject *output_id(PyObject *known, PyObject *out, PyObject *b) {
    PyObject *k = PyObject_GetAttr(known, out_id_name);
    if (k == NULL)
        return NULL;
    if (k != Py_None)
        return k;
    Py_DECREF(k);
    return PyObject_CallFunctionObjArgs(learn_out_id, known, out, b, NULL);
}

/* The output Array of a plan (`known`: its out_id), settled with its pointer and the plan's
 * layout id when numpy.empty made it, else left for its next use (`_k` None). */
PyObject *output_array(PyObject *known, PyObject *out, PyObject *b,
                              unsigned long long address, int settled) {
    if (!settled)
        return new_array(out, b, NULL, Py_None);
    PyObject *k = output_id(known, out, b);
    if (k == NULL)
        return NULL;
    PyObject *address_object = PyLong_FromUnsignedLongLong(address), *r = NULL;
    if (address_object != NULL)
        r = new_array(out, b, address_object, k);
    Py_XDECREF(address_object);
    Py_DECREF(k);
    return r;
}

/* A fused call's outputs `outs` (a tuple of native arrays) as its function returns them:
 * `returns` None, the one output's Array (settled with `known`'s layout id when `settled`,
 * pointer `address`), else a new `tuple` or `list` of Arrays settled at their first use.
 * NULL on an error. */
PyObject *returned_outputs(PyObject *known, PyObject *outs, PyObject *b, PyObject *returns,
                           unsigned long long address, int settled) {
    if (returns == Py_None)
        return output_array(known, PyTuple_GET_ITEM(outs, 0), b, address, settled);
    Py_ssize_t n = PyTuple_GET_SIZE(outs);
    int list = returns == (PyObject *)&PyList_Type;
    PyObject *made = list ? PyList_New(n) : PyTuple_New(n);
    for (Py_ssize_t i = 0; made != NULL && i < n; i++) {
        PyObject *array = output_array(known, PyTuple_GET_ITEM(outs, i), b, 0, 0);
        if (array == NULL)
            Py_CLEAR(made);
        else if (list)
            PyList_SET_ITEM(made, i, array);
        else
            PyTuple_SET_ITEM(made, i, array);
    }
    return made;
}

/* What a plan of one array and one scalar keeps per scalar `v`: `last` = [the last (v, off,
 * on) seen], `made` the function that makes and keeps them for another scalar (the
 * emulator's packed tails, short_path._scalar_tails: native's t[14], t[15]; a GPU's packed
 * parameters, short_path._compiled_scalar_bytes: a launch record's). Returns the seen tuple
 * (a new reference), Py_None (a new reference) when the scalar's value goes the Python way
 * (out of its dtype's range), or NULL on an error. */
PyObject *scalar_seen(PyObject *last, PyObject *made, PyObject *v) {
    if (!PyList_CheckExact(last) || PyList_GET_SIZE(last) != 1)
        Py_RETURN_NONE;
    PyObject *seen = PyList_GET_ITEM(last, 0);  /* one read: another thread may replace it */
    Py_INCREF(seen);
    if (PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 3 && PyTuple_GET_ITEM(seen, 0) == v)
        return seen;
    Py_DECREF(seen);
    seen = PyObject_CallOneArg(made, v);  /* the scalar's tails or bytes, or None */
    if (seen == NULL || (PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 3))
        return seen;
    Py_DECREF(seen);
    Py_RETURN_NONE;
}

/* What a fused plan with scalar arguments keeps per their values: `source` = (positions,
 * last, made) of fusion._scalar_arguments, `last` = [the last (values, off, on) seen]. The
 * seen tuple (a new reference) when each scalar argument of `operands` is the object seen
 * last, else made(operands)'s; Py_None (a new reference) for the Python way; NULL on an
 * error. fusion.head_for is its Python twin. */
PyObject *scalars_seen(PyObject *source, PyObject *operands) {
    if (!PyTuple_CheckExact(source) || PyTuple_GET_SIZE(source) != 3)
        Py_RETURN_NONE;
    PyObject *positions = PyTuple_GET_ITEM(source, 0), *last = PyTuple_GET_ITEM(source, 1);
    if (!PyTuple_CheckExact(positions) || !PyList_CheckExact(last) || PyList_GET_SIZE(last) != 1)
        Py_RETURN_NONE;
    PyObject *seen = PyList_GET_ITEM(last, 0);  /* one read: another thread may replace it */
    Py_INCREF(seen);
    Py_ssize_t n = PyTuple_GET_SIZE(positions);
    if (PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 3) {
        PyObject *values = PyTuple_GET_ITEM(seen, 0);
        int same = PyTuple_CheckExact(values) && PyTuple_GET_SIZE(values) == n;
        for (Py_ssize_t i = 0; same && i < n; i++) {
            Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, i));
            same = k >= 0 && k < PyTuple_GET_SIZE(operands) &&
                   PyTuple_GET_ITEM(operands, k) == PyTuple_GET_ITEM(values, i);
        }
        PyErr_Clear();  /* a position that is no index: made() decides */
        if (same)
            return seen;
    }
    Py_DECREF(seen);
    seen = PyObject_CallOneArg(PyTuple_GET_ITEM(source, 2), operands);
    if (seen == NULL || (PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 3))
        return seen;
    Py_DECREF(seen);
    Py_RETURN_NONE;
}

/* 1 when the kernel may write into `out` at `out_address` directly (short_path.out_usable's
 * overlap rule, `check` = short_path.out_check's (align_mask, lo, hi, ((k, x_lo, x_hi,
 * same), ...)): aligned, overlapping no input but in its very layout, the inputs at
 * `address[k]`, k < n, none the scalar's `scalar_at`); 0 when the Python way decides (an
 * overlap computes into a temporary there). */
int out_clear(PyObject *check, unsigned long long out_address,
              const unsigned long long *address, Py_ssize_t n, long scalar_at) {
    if (!PyTuple_CheckExact(check) || PyTuple_GET_SIZE(check) != 4 ||
        out_address & as_bits(PyTuple_GET_ITEM(check, 0)))
        return 0;
    long long lo = (long long)out_address + PyLong_AsLongLong(PyTuple_GET_ITEM(check, 1));
    long long hi = (long long)out_address + PyLong_AsLongLong(PyTuple_GET_ITEM(check, 2));
    PyObject *inputs = PyTuple_GET_ITEM(check, 3);
    if (PyErr_Occurred() || !PyTuple_CheckExact(inputs)) {
        PyErr_Clear();
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *input = PyTuple_GET_ITEM(inputs, i);
        if (!PyTuple_CheckExact(input) || PyTuple_GET_SIZE(input) != 4)
            return 0;
        long k = PyLong_AsLong(PyTuple_GET_ITEM(input, 0));
        long long x_lo = PyLong_AsLongLong(PyTuple_GET_ITEM(input, 1));
        long long x_hi = PyLong_AsLongLong(PyTuple_GET_ITEM(input, 2));
        int same = PyObject_IsTrue(PyTuple_GET_ITEM(input, 3));
        if (PyErr_Occurred() || same < 0 || k < 0 || k >= n || k == scalar_at) {
            PyErr_Clear();
            return 0;
        }
        long long at = (long long)address[k];
        if (at + x_lo < hi && lo < at + x_hi && !(same && (unsigned long long)at == out_address))
            return 0;  /* overlapping: the full call decides */
    }
    return 1;
}

/* The Array a fused call's input check (k, unwrap, align_mask, vector_mask) names: operand k
 * of `operands`, borrowed; NULL (no error set) when the check is not one or operand k is no
 * Array (the Python way decides). */
PyObject *checked_array(PyObject *check, PyObject *operands) {
    if (!PyTuple_CheckExact(check) || PyTuple_GET_SIZE(check) != 4)
        return NULL;
    Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(check, 0));
    if (k < 0 || k >= PyTuple_GET_SIZE(operands)) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *x = PyTuple_GET_ITEM(operands, k);
    if (Py_TYPE(x) != (PyTypeObject *)Array_type || SLOT(x, off_a) == NULL ||
        SLOT(x, off_b) == NULL)
        return NULL;
    return x;
}
