/* A deferred call inside xp.lazy() whose chain the tape knows, compiled: namespace/lazy.py's
 * defer_seen in C (docs/dev/hot_path.md, "Deferred calls inside lazy()").
 *
 * A thread's tape (namespace/lazy_tape.py) follows a ChainState per chain shape; a state knows,
 * per call key (the name, then per operand a new Array's layout id, leaf_ref(k) for an Array
 * already leaf k of the tape, step_ref(j) for the pending result of step j, or a scalar's
 * type), the state after the call and what lazy.defer resolved of it. This file builds the
 * key, finds the state, makes the PendingExpression and the deferred Array and writes the
 * step, under pending.lock (taken without waiting: a lock held elsewhere sends the call the
 * Python way, which waits). Whatever the key leaves to check per call beyond the plain
 * cases (an int out of the computing dtype's range, a comparison's int, a GPU's index read
 * from CuPy) goes the Python way too, before anything is written: the rules live there.
 */
#include "lazy_calls.h"

/* What configure_lazy() was given (references held for the life of the process). */
static PyObject *pending_dict, *expression_type, *tape_type, *lock_acquire, *lock_release,
    *register_seen, *deferred_scalars, *tapes_name, *expressions_name, *cuda_name, *data_name, *device_id_name, *empty,
    *lazy_flag, *logger, *fused_name, *getattr_name, *enabled_for_name, *debug_level;
/* Byte offsets of the slots read and written. */
static Py_ssize_t off_e_name, off_e_args, off_e_constants, off_e_dtype, off_e_shape,
    off_e_backend, off_e_device, off_e_nodes, off_e_inputs, off_e_scalars, off_e_kind,
    off_e_result, off_e_tape, off_e_index;
static Py_ssize_t off_t_state, off_t_leaves, off_t_leaf_of, off_t_device;
static Py_ssize_t off_s_steps, off_s_backend, off_s_leaves, off_s_next, off_s_fused;

#define MAX_OPERANDS 3 /* the compiled calls' operands: unary and binary */
#define MAX_OUTPUTS 8  /* pending.MAX_OUTPUTS: Arrays one kernel writes */

PyObject *configure_lazy(PyObject *self, PyObject *args) {
    PyObject *values[9];
    if (!PyArg_UnpackTuple(args, "configure_lazy", 9, 9, &values[0], &values[1], &values[2],
                           &values[3], &values[4], &values[5], &values[6], &values[7],
                           &values[8]))
        return NULL;
    if (!PyDict_Check(values[0]) || !PyType_Check(values[1]) || !PyType_Check(values[2]) ||
        !PyType_Check(values[3]) || !PyAnySet_Check(values[6]) ||
        !PyContextVar_CheckExact(values[7])) {
        PyErr_SetString(PyExc_TypeError, "configure_lazy: pending's namespace, "
                        "PendingExpression, Tape, ChainState, lock, register_seen, scalar "
                        "types, the lazy ContextVar, the logger");
        return NULL;
    }
    PyObject *e = values[1], *t = values[2], *s = values[3];
    if (slot_offset(e, "name", &off_e_name) || slot_offset(e, "args", &off_e_args) ||
        slot_offset(e, "constants", &off_e_constants) || slot_offset(e, "dtype", &off_e_dtype) ||
        slot_offset(e, "shape", &off_e_shape) || slot_offset(e, "backend", &off_e_backend) ||
        slot_offset(e, "device", &off_e_device) || slot_offset(e, "nodes", &off_e_nodes) ||
        slot_offset(e, "inputs", &off_e_inputs) || slot_offset(e, "scalars", &off_e_scalars) ||
        slot_offset(e, "kind", &off_e_kind) || slot_offset(e, "result", &off_e_result) ||
        slot_offset(e, "tape", &off_e_tape) || slot_offset(e, "index", &off_e_index) ||
        slot_offset(t, "state", &off_t_state) || slot_offset(t, "leaves", &off_t_leaves) ||
        slot_offset(t, "leaf_of", &off_t_leaf_of) || slot_offset(t, "device", &off_t_device) ||
        slot_offset(s, "steps", &off_s_steps) || slot_offset(s, "backend", &off_s_backend) ||
        slot_offset(s, "leaves", &off_s_leaves) || slot_offset(s, "next", &off_s_next) ||
        slot_offset(s, "fused", &off_s_fused))
        return NULL;
    PyObject *acquire = PyObject_GetAttrString(values[4], "acquire");
    PyObject *release = PyObject_GetAttrString(values[4], "release");
    if (acquire == NULL || release == NULL) {
        Py_XDECREF(acquire);
        Py_XDECREF(release);
        return NULL;
    }
    Py_XSETREF(lock_acquire, acquire);
    Py_XSETREF(lock_release, release);
    PyObject **targets[7] = {&pending_dict, &expression_type, &tape_type, &register_seen,
                             &deferred_scalars, &lazy_flag, &logger};
    PyObject *given[7] = {values[0], values[1], values[2], values[5], values[6], values[7],
                          values[8]};
    for (int i = 0; i < 7; i++) {
        Py_INCREF(given[i]);
        Py_XSETREF(*targets[i], given[i]);
    }
    if (tapes_name == NULL) {
        tapes_name = PyUnicode_InternFromString("tapes");
        expressions_name = PyUnicode_InternFromString("expressions");
        cuda_name = PyUnicode_InternFromString("cuda");
        data_name = PyUnicode_InternFromString("data");
        device_id_name = PyUnicode_InternFromString("device_id");
        empty = PyTuple_New(0);
        fused_name = PyUnicode_InternFromString("fused");
        getattr_name = PyUnicode_InternFromString("__getattr__");
        enabled_for_name = PyUnicode_InternFromString("isEnabledFor");
        debug_level = PyLong_FromLong(10);  /* logging.DEBUG */
        if (!tapes_name || !expressions_name || !cuda_name || !data_name || !device_id_name ||
            !empty || !fused_name || !getattr_name || !enabled_for_name || !debug_level) {
            Py_CLEAR(tapes_name);
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* A Py_ssize_t held in a slot as a Python int; -1 where it is not one (no error left). */
static Py_ssize_t slot_size(PyObject *obj, Py_ssize_t off) {
    PyObject *v = SLOT(obj, off);
    if (v == NULL || !PyLong_CheckExact(v))
        return -1;
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1)
        PyErr_Clear();
    return n;
}

static void set_slot(PyObject *obj, Py_ssize_t off, PyObject *value) {
    Py_INCREF(value);
    Py_XSETREF(SLOT(obj, off), value);
}

/* v within [low, high] (ints compared as Python compares them): 1, 0, -1 on an error. */
static int within(PyObject *v, PyObject *low, PyObject *high) {
    int above = PyObject_RichCompareBool(low, v, Py_LE);
    if (above <= 0)
        return above;
    return PyObject_RichCompareBool(v, high, Py_LE);
}

/* The GPU of a cuda Array (its CuPy array's `.data.device_id`) is `*device` (a new
 * reference, replaced when None): 1, 0 where it differs, -1 on an error. */
static int gpu_of(PyObject *array, PyObject **device) {
    PyObject *native = SLOT(array, off_a), *data, *on;
    if (native == NULL)
        return 0;
    data = PyObject_GetAttr(native, data_name);
    on = data == NULL ? NULL : PyObject_GetAttr(data, device_id_name);
    Py_XDECREF(data);
    if (on == NULL)
        return -1;
    if (*device == Py_None) {
        Py_SETREF(*device, on);
        return 1;
    }
    int same = PyObject_RichCompareBool(on, *device, Py_EQ);
    Py_DECREF(on);
    return same;
}

/* The tape's known chain takes name(*args): the deferred Array, or Py_None (new references)
 * for the Python way; NULL on an error. pending.lock is held. */
static PyObject *defer_locked(PyObject *name, PyObject *const *args, Py_ssize_t n) {
    /* pending.current_tape(): this thread's tape (none yet: the Python way makes it) */
    PyObject *tapes = PyDict_GetItemWithError(pending_dict, tapes_name);  /* borrowed */
    PyObject *ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    if (ident == NULL)
        return NULL;
    PyObject *tape = tapes == NULL || !PyDict_CheckExact(tapes) ? NULL :
        PyDict_GetItemWithError(tapes, ident);
    Py_DECREF(ident);
    PyObject *expressions = tape == NULL ? NULL :
        PyDict_GetItemWithError(pending_dict, expressions_name);
    if (expressions == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    if (Py_TYPE(tape) != (PyTypeObject *)tape_type || !PyList_CheckExact(expressions))
        Py_RETURN_NONE;
    PyObject *state = SLOT(tape, off_t_state), *leaf_of = SLOT(tape, off_t_leaf_of);
    Py_ssize_t leaves = state == NULL ? -1 : slot_size(state, off_s_leaves);
    if (state == NULL || state == Py_None || leaves < 0 || leaf_of == NULL ||
        !PyDict_CheckExact(leaf_of))
        Py_RETURN_NONE;
    PyObject *key = PyTuple_New(n + 1), *operands = PyTuple_New(n);
    PyObject *added[MAX_OPERANDS], *fresh[MAX_OPERANDS], *r = NULL;
    Py_ssize_t fresh_at[MAX_OPERANDS], n_added = 0, n_fresh = 0, n_arrays = 0;
    if (key == NULL || operands == NULL)
        goto done;
    Py_INCREF(name);
    PyTuple_SET_ITEM(key, 0, name);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = args[i], *item = NULL;
        if (Py_TYPE(a) == (PyTypeObject *)Array_type) {
            PyObject *p = SLOT(a, off_p);
            n_arrays++;
            if (p != NULL && p != Py_None) {  /* a pending result: its step on this tape */
                if (Py_TYPE(p) != (PyTypeObject *)expression_type || SLOT(p, off_e_tape) != tape)
                    goto python;
                Py_ssize_t index = slot_size(p, off_e_index);
                if (index < 0)
                    goto python;
                item = PyLong_FromSsize_t(-1 - 2 * index);  /* lazy_tape.step_ref */
                Py_INCREF(p);
                PyTuple_SET_ITEM(operands, i, p);
            } else {
                Py_ssize_t k = -1;
                PyObject *id = PyLong_FromVoidPtr(a);
                if (id == NULL)
                    goto done;
                PyObject *known = PyDict_GetItemWithError(leaf_of, id);
                Py_DECREF(id);
                if (known != NULL) {
                    k = PyLong_AsSsize_t(known);
                    if (k < 0)
                        goto done;
                } else if (PyErr_Occurred()) {
                    goto done;
                }
                for (Py_ssize_t j = 0; k < 0 && j < n_fresh; j++)  /* (x * x: one leaf) */
                    if (fresh[j] == a)
                        k = fresh_at[j];
                if (k >= 0) {
                    item = PyLong_FromSsize_t(-2 - 2 * k);  /* lazy_tape.leaf_ref */
                } else {
                    item = layout_key(a);
                    if (item == NULL) {
                        if (PyErr_Occurred())
                            goto done;
                        goto python;
                    }
                    fresh[n_fresh] = a;
                    fresh_at[n_fresh++] = leaves;
                    added[n_added++] = a;
                    leaves++;
                }
                Py_INCREF(a);
                PyTuple_SET_ITEM(operands, i, a);
            }
        } else {
            int scalar = PySet_Contains(deferred_scalars, (PyObject *)Py_TYPE(a));
            if (scalar <= 0) {
                if (scalar < 0)
                    goto done;
                goto python;
            }
            item = (PyObject *)Py_TYPE(a);
            Py_INCREF(item);
            added[n_added++] = a;
            leaves++;
            Py_INCREF(a);
            PyTuple_SET_ITEM(operands, i, a);
        }
        if (item == NULL)
            goto done;
        PyTuple_SET_ITEM(key, i + 1, item);
    }
    if (n_arrays == 0)
        goto python;
    PyObject *next = SLOT(state, off_s_next);
    if (next == NULL || !PyDict_CheckExact(next))
        goto python;
    PyObject *known = PyDict_GetItemWithError(next, key);  /* (after, resolved, sizes...) */
    if (known == NULL) {
        if (PyErr_Occurred())
            goto done;
        goto python;
    }
    if (!PyTuple_CheckExact(known) || PyTuple_GET_SIZE(known) != 5)
        goto python;
    PyObject *after = PyTuple_GET_ITEM(known, 0), *resolved = PyTuple_GET_ITEM(known, 1);
    if (!PyTuple_CheckExact(resolved) || PyTuple_GET_SIZE(resolved) != 7)
        goto python;  /* None: the call was never resolved on this path */
    /* resolved: (dtype_out, shape, kind, bounds, ints, compared, dtype_in) */
    PyObject *bounds = PyTuple_GET_ITEM(resolved, 3), *ints = PyTuple_GET_ITEM(resolved, 4),
             *compared = PyTuple_GET_ITEM(resolved, 5);
    if (!PyTuple_CheckExact(compared) || PyTuple_GET_SIZE(compared) != 0 ||
        !PyTuple_CheckExact(ints) || !PyTuple_CheckExact(bounds) ||
        PyTuple_GET_SIZE(bounds) != 2)
        goto python;  /* a comparison's int: answered the Python way */
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ints); j++) {
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(ints, j));
        if (k < 0 || k >= n) {
            PyErr_Clear();
            goto python;
        }
        int fits = within(args[k], PyTuple_GET_ITEM(bounds, 0), PyTuple_GET_ITEM(bounds, 1));
        if (fits <= 0) {
            if (fits < 0)
                goto done;
            goto python;  /* the Python way converts it, raising the eager OverflowError */
        }
    }
    PyObject *backend = SLOT(after, off_s_backend), *steps = SLOT(state, off_s_steps),
             *device = SLOT(tape, off_t_device);
    if (backend == NULL || device == NULL || steps == NULL || !PyTuple_CheckExact(steps))
        goto python;
    Py_INCREF(device);
    if (same_backend(backend, cuda_name)) {  /* the layout ids name no GPU: read each */
        for (Py_ssize_t j = 0; j < n_fresh; j++) {
            int same = gpu_of(fresh[j], &device);
            if (same <= 0) {
                Py_DECREF(device);
                if (same < 0)
                    goto done;
                goto python;  /* arrays on several GPUs: the eager call says what happens */
            }
        }
    }
    /* Everything checked: the expression and its Array, then the step written. */
    PyObject *expression = ((PyTypeObject *)expression_type)->tp_alloc(
        (PyTypeObject *)expression_type, 0);
    PyObject *index = PyLong_FromSsize_t(PyTuple_GET_SIZE(steps));
    if (expression == NULL || index == NULL) {
        Py_XDECREF(expression);
        Py_XDECREF(index);
        Py_DECREF(device);
        goto done;
    }
    /* PendingExpression.__init__'s fields, and Tape.write_seen's tape and index */
    struct {
        Py_ssize_t off;
        PyObject *value;
    } fields[] = {{off_e_name, name}, {off_e_args, operands}, {off_e_constants, empty},
                  {off_e_dtype, PyTuple_GET_ITEM(resolved, 0)},
                  {off_e_shape, PyTuple_GET_ITEM(resolved, 1)}, {off_e_backend, backend},
                  {off_e_device, device}, {off_e_nodes, PyTuple_GET_ITEM(known, 2)},
                  {off_e_inputs, PyTuple_GET_ITEM(known, 3)},
                  {off_e_scalars, PyTuple_GET_ITEM(known, 4)},
                  {off_e_kind, PyTuple_GET_ITEM(resolved, 2)}, {off_e_result, Py_None},
                  {off_e_tape, tape}, {off_e_index, index}};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        set_slot(expression, fields[f].off, fields[f].value);
    Py_DECREF(index);
    Py_DECREF(device);
    PyTypeObject *array_type = (PyTypeObject *)Array_type;
    PyObject *array = array_type->tp_alloc(array_type, 0);
    if (array == NULL) {
        Py_DECREF(expression);
        goto done;
    }
    SLOT(array, off_b) = backend;
    Py_INCREF(backend);
    SLOT(array, off_p) = expression;  /* the reference made above */
    SLOT(array, off_k) = Py_None;
    Py_INCREF(Py_None);
    /* Tape.write_seen: its leaves, the new Arrays' leaf indices, the state after it */
    PyObject *tape_leaves = SLOT(tape, off_t_leaves);
    if (tape_leaves == NULL || !PyList_CheckExact(tape_leaves)) {
        Py_DECREF(array);
        goto python;
    }
    for (Py_ssize_t j = 0; j < n_added; j++)
        if (PyList_Append(tape_leaves, added[j]) < 0) {
            Py_DECREF(array);
            goto done;
        }
    for (Py_ssize_t j = 0; j < n_fresh; j++) {
        PyObject *id = PyLong_FromVoidPtr(fresh[j]), *k = PyLong_FromSsize_t(fresh_at[j]);
        int failed = id == NULL || k == NULL || PyDict_SetItem(leaf_of, id, k) < 0;
        Py_XDECREF(id);
        Py_XDECREF(k);
        if (failed) {
            Py_DECREF(array);
            goto done;
        }
    }
    set_slot(tape, off_t_device, SLOT(expression, off_e_device));
    set_slot(tape, off_t_state, after);
    /* pending.register_seen: a weak reference in pending.expressions (the first deferral
       of the process also turns Array's pending reads on: Python's) */
    int reads_on = PyDict_Contains(array_type->tp_dict, getattr_name);
    if (reads_on < 0) {
        Py_DECREF(array);
        goto done;
    }
    if (!reads_on) {
        PyObject *ok = PyObject_CallOneArg(register_seen, array);
        if (ok == NULL) {
            Py_DECREF(array);
            goto done;
        }
        Py_DECREF(ok);
    } else {
        PyObject *ref = PyWeakref_NewRef(array, NULL);
        if (ref == NULL || PyList_Append(expressions, ref) < 0) {
            Py_XDECREF(ref);
            Py_DECREF(array);
            goto done;
        }
        Py_DECREF(ref);
    }
    r = array;
    goto done;
python:
    r = Py_None;
    Py_INCREF(r);
done:
    Py_XDECREF(key);
    Py_XDECREF(operands);
    return r;
}

/* pending.lock taken without waiting: 1, 0 where another thread holds it (the Python way
 * waits for it), -1 on an error. */
static int acquire_lock(void) {
    PyObject *got = PyObject_CallOneArg(lock_acquire, Py_False);
    if (got == NULL)
        return -1;
    int locked = got == Py_True;
    Py_DECREF(got);
    return locked;
}

/* pending.lock released, keeping an error already set (0), or -1 with the release's. */
static int release_lock(void) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallNoArgs(lock_release);
    if (released == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return -1;
    }
    Py_DECREF(released);
    PyErr_Restore(type, value, traceback);
    return 0;
}

PyObject *defer_seen(PyObject *name, PyObject *const *args, Py_ssize_t n) {
    if (pending_dict == NULL || n > MAX_OPERANDS)
        Py_RETURN_NONE;
    int locked = acquire_lock();
    if (locked <= 0)
        return locked < 0 ? NULL : (Py_INCREF(Py_None), Py_None);
    PyObject *r = defer_locked(name, args, n);
    if (release_lock() < 0)
        Py_CLEAR(r);
    return r;
}

/* pending.evaluate_all's way for a chain seen before, the lock held: every live deferred
 * Array on one tape whose state kept the fused function of these outputs. 1 done, 0 for the
 * Python way (nothing changed), -1 on an error (what was pending stays so, on its tape). */
static int evaluate_locked(PyObject *expressions) {
    Py_ssize_t n = PyList_GET_SIZE(expressions), n_live = 0;
    PyObject *owners[MAX_OUTPUTS], *outputs = NULL, *fused, *leaves = NULL, *results = NULL,
             *tape = NULL;
    int r = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *owner = PyObject_CallNoArgs(PyList_GET_ITEM(expressions, i));  /* a weakref */
        if (owner == NULL) {
            r = -1;
            goto done;
        }
        PyObject *p = Py_TYPE(owner) == (PyTypeObject *)Array_type ? SLOT(owner, off_p) : NULL;
        if (p == NULL || p == Py_None) {  /* dead, or evaluated by a read */
            Py_DECREF(owner);
            continue;
        }
        PyObject *on = Py_TYPE(p) == (PyTypeObject *)expression_type ? SLOT(p, off_e_tape) : NULL;
        if (n_live == MAX_OUTPUTS || on == NULL || on == Py_None || (tape && on != tape)) {
            Py_DECREF(owner);
            goto done;  /* several tapes, or more outputs than a kernel writes */
        }
        tape = on;
        owners[n_live++] = owner;
    }
    if (n_live == 0)
        goto done;
    PyObject *state = SLOT(tape, off_t_state);
    PyObject *table = state == NULL || state == Py_None ? NULL : SLOT(state, off_s_fused);
    PyObject *tape_leaves = SLOT(tape, off_t_leaves);
    if (table == NULL || !PyDict_CheckExact(table) || tape_leaves == NULL ||
        !PyList_CheckExact(tape_leaves) || (outputs = PyTuple_New(n_live)) == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < n_live; j++) {
        PyObject *index = SLOT(SLOT(owners[j], off_p), off_e_index);
        if (index == NULL)
            goto done;
        Py_INCREF(index);
        PyTuple_SET_ITEM(outputs, j, index);
    }
    fused = PyDict_GetItemWithError(table, outputs);  /* borrowed */
    if (fused == NULL) {
        r = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    leaves = PyList_AsTuple(tape_leaves);
    if (leaves == NULL) {
        r = -1;
        goto done;
    }
    /* the evaluation's own calls run now (lazy_kernels.evaluate_group's fused call) */
    PyObject *token = PyContextVar_Set(lazy_flag, Py_False);
    if (token == NULL) {
        r = -1;
        goto done;
    }
    Py_INCREF(fused);
    results = PyObject_Call(fused, leaves, NULL);
    Py_DECREF(fused);
    if (PyContextVar_Reset(lazy_flag, token) < 0)
        Py_CLEAR(results);
    Py_DECREF(token);
    if (results == NULL) {
        /* cannot fuse (TypeError): the Python way runs the calls themselves */
        r = PyErr_ExceptionMatches(PyExc_TypeError) ? (PyErr_Clear(), 0) : -1;
        goto done;
    }
    if (n_live > 1 && (!PyTuple_CheckExact(results) || PyTuple_GET_SIZE(results) != n_live))
        goto done;  /* (not the function's own shape of outputs: decided in Python) */
    for (Py_ssize_t j = 0; j < n_live; j++) {
        PyObject *result = n_live == 1 ? results : PyTuple_GET_ITEM(results, j);
        if (Py_TYPE(result) != (PyTypeObject *)Array_type || SLOT(result, off_a) == NULL)
            goto done;
    }
    /* computed: each Array takes its buffer, each expression lets its inputs go */
    for (Py_ssize_t j = 0; j < n_live; j++) {
        PyObject *owner = owners[j], *expression = SLOT(owner, off_p);
        PyObject *result = n_live == 1 ? results : PyTuple_GET_ITEM(results, j);
        Py_INCREF(expression);
        set_slot(owner, off_a, SLOT(result, off_a));
        set_slot(owner, off_p, Py_None);
        set_slot(expression, off_e_result, owner);
        set_slot(expression, off_e_args, empty);
        set_slot(expression, off_e_tape, Py_None);
        Py_DECREF(expression);
    }
    r = 1;
done:
    for (Py_ssize_t j = 0; j < n_live; j++)
        Py_DECREF(owners[j]);
    Py_XDECREF(outputs);
    Py_XDECREF(leaves);
    Py_XDECREF(results);
    return r;
}

PyObject *evaluate_seen(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (pending_dict == NULL)
        Py_RETURN_NONE;
    PyObject *debug = PyObject_CallMethodOneArg(logger, enabled_for_name, debug_level);
    if (debug == NULL)
        return NULL;
    int logged = PyObject_IsTrue(debug);
    Py_DECREF(debug);
    if (logged)
        Py_RETURN_NONE;  /* the Python way logs each evaluation */
    int locked = acquire_lock();
    if (locked <= 0)
        return locked < 0 ? NULL : (Py_INCREF(Py_None), Py_None);
    PyObject *expressions = PyDict_GetItemWithError(pending_dict, expressions_name);
    PyObject *tapes = PyDict_GetItemWithError(pending_dict, tapes_name);
    int done = 0;
    if (expressions != NULL && tapes != NULL && PyList_CheckExact(expressions) &&
        PyDict_CheckExact(tapes))
        done = evaluate_locked(expressions);
    else if (PyErr_Occurred())
        done = -1;
    if (done == 1) {  /* evaluate_all's ending: no pending left, a new tape for this thread */
        PyObject *ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
        PyObject *fresh = ident == NULL ? NULL : PyObject_CallNoArgs(tape_type);
        if (fresh == NULL || PyList_SetSlice(expressions, 0, PY_SSIZE_T_MAX, NULL) < 0) {
            done = -1;
        } else {
            PyDict_Clear(tapes);
            if (PyDict_SetItem(tapes, ident, fresh) < 0)
                done = -1;
        }
        Py_XDECREF(ident);
        Py_XDECREF(fresh);
    }
    if (release_lock() < 0 || done < 0)
        return NULL;
    if (done == 0)
        Py_RETURN_NONE;
    Py_RETURN_TRUE;
}
