/* tensordict._fastreads: TensorDict's hot dict-like reads, answered in C.
 *
 * Why C: a call of a Python method costs a frame, which alone is ~1.5x a dict's C method
 * (issue 15: td.get(key) ~70 ns against dict.get's ~19 ns). This base type of TensorDict
 * holds the storage dict (TensorDict._tensordict) as a C member and answers the common
 * case without a frame: a str key (or a tuple of str keys through nested TensorDicts)
 * that is present, whose entry is exactly a torch.Tensor or exactly a TensorDict.
 * Every other call (nested keys, indexing, non-tensor data,
 * defaults, errors, arguments) goes to the pure-Python method the subclass defines
 * (_getitem_py, _get_py, _keys_py, _values_py, _items_py), which stays the reference
 * behaviour: it is what runs without this module (TENSORDICT_NO_C=1, no compiler), and
 * what torch.compile traces (tensordict/_hotreads.py registers it with dynamo).
 *
 * tensordict._hotreads.install wires this in (install(TensorDict, Tensor) below): the
 * entry types are handed in, so that this module imports nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *storage; /* TensorDict._tensordict: a dict of str -> entry */
} FastReads;

/* Exactly these entry types are returned as they are; any other entry goes the Python
 * way (a NonTensorStack reads as its list of values, non-tensor data as the value...). */
static PyTypeObject *tensor_type = NULL;
static PyTypeObject *tensordict_type = NULL;

static PyObject *str_getitem_py, *str_get_py, *str_keys_py, *str_values_py,
    *str_items_py;
/* The C functions behind dict.keys / dict.values / dict.items (METH_NOARGS), called on
 * the storage directly: a lookup or a generic call would cost as much as the view. */
static PyCFunction dict_keys, dict_values, dict_items;

/* The entry of ``storage`` at the str ``key`` (borrowed), NULL if absent or if
 * ``storage`` is not a dict (not set yet), without an exception set. */
static inline PyObject *
lookup(PyObject *storage, PyObject *key)
{
    if (storage == NULL || !PyDict_CheckExact(storage)) {
        return NULL;
    }
    /* a str's hash is cached after its first use: this is one C lookup */
    PyObject *value = PyDict_GetItemWithError(storage, key);
    if (value == NULL) {
        PyErr_Clear(); /* a failed hash cannot happen for str; be safe anyway */
    }
    return value;
}

/* The entry at ``key`` when it is one that is returned as it is: ``key`` a str, or a
 * tuple of str whose every level before the last is exactly a TensorDict (the walk the
 * Python method does first). NULL otherwise, without an exception set: the caller then
 * takes the Python path, which decides (errors included). */
static inline PyObject *
returned_as_is(PyObject *value)
{
    if (value != NULL &&
        (Py_TYPE(value) == tensor_type || Py_TYPE(value) == tensordict_type)) {
        return Py_NewRef(value);
    }
    return NULL;
}

static inline PyObject *
plain_entry(FastReads *self, PyObject *key)
{
    if (PyUnicode_CheckExact(key)) { /* the most frequent read first */
        return returned_as_is(lookup(self->storage, key));
    }
    if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) == 0) {
        return NULL;
    }
    PyObject *value = (PyObject *)self;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        PyObject *part = PyTuple_GET_ITEM(key, i);
        if (!PyUnicode_CheckExact(part) || (i > 0 && Py_TYPE(value) != tensordict_type)) {
            return NULL;
        }
        value = lookup(((FastReads *)value)->storage, part);
        if (value == NULL) {
            return NULL;
        }
    }
    return returned_as_is(value);
}

/* td[key]: the mapping slot of TensorDict itself (install_subscript), not of this type:
 * TensorDict keeps its Python __getitem__ in its class dict, for torch.compile to trace,
 * while CPython calls the slot. */
static PyObject *
fastreads_subscript(PyObject *self, PyObject *key)
{
    PyObject *value = plain_entry((FastReads *)self, key);
    if (value != NULL) {
        return value;
    }
    return PyObject_CallMethodOneArg(self, str_getitem_py, key);
}

/* Forward a call's arguments unchanged to the Python method ``name`` of ``self``
 * (a call that is not the common case: missing keys, other entries, arguments). */
static PyObject *
call_python(PyObject *self, PyObject *name, PyObject *const *args, Py_ssize_t nargs,
            PyObject *kwnames)
{
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *stack[12];
    if (total < 12) {
        /* self first, as PyObject_VectorcallMethod takes it: no bound method made */
        stack[0] = self;
        for (Py_ssize_t i = 0; i < total; i++) {
            stack[i + 1] = args[i];
        }
        return PyObject_VectorcallMethod(name, stack, nargs + 1, kwnames);
    }
    PyObject *method = PyObject_GetAttr(self, name);
    if (method == NULL) {
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(method, args, nargs, kwnames);
    Py_DECREF(method);
    return result;
}

/* td.get(key, default=..., ...): the fast path only for positional arguments (a keyword
 * the Python method does not take must still raise there); a present entry does not
 * depend on ``default`` or on the lazy-stack arguments. */
static PyObject *
fastreads_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    if (nargs >= 1 && nargs <= 8 && kwnames == NULL) {
        PyObject *value = plain_entry((FastReads *)self, args[0]);
        if (value != NULL) {
            return value;
        }
    }
    return call_python(self, str_get_py, args, nargs, kwnames);
}

/* Whether every entry of the dict ``storage`` is exactly a torch.Tensor or exactly a
 * TensorDict: then values() and items() read as the storage holds them (any other entry,
 * non-tensor data above all, which reads as NonTensorData, goes the Python way). */
static inline int
all_plain_entries(PyObject *storage)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(storage, &pos, &key, &value)) {
        if (Py_TYPE(value) != tensor_type && Py_TYPE(value) != tensordict_type) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ _StringKeys
 * What td.keys() returns: the storage dict's live keys view, wrapped so that ``in``
 * takes a key as 0.15.3's view does: a str, or a non-empty tuple of str (a 1-tuple is
 * its str; a longer one is a nested key, never among this level's keys); anything else
 * raises TypeError. Iteration, len, comparisons and set operators are the dict view's.
 * tensordict/_hotreads.py holds the same in Python (the reference without this module). */
typedef struct {
    PyObject_HEAD
    PyObject *dict; /* the dict whose keys these are */
} StringKeys;

static PyTypeObject *StringKeysType = NULL;

static const char keys_type_error[] =
    "TensorDict keys are always strings. Membership checks are only supported for "
    "strings or non-empty tuples of strings (for nested TensorDicts); got %R";

/* The keys of the dict ``dict``: one allocation, no dict view made (the view is made
 * only for the rarer reads: comparisons, set operators, repr). */
static PyObject *
string_keys_wrap(PyObject *dict)
{
    StringKeys *self = PyObject_GC_New(StringKeys, StringKeysType);
    if (self == NULL) {
        return NULL;
    }
    self->dict = Py_NewRef(dict);
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* The dict's own keys view (a new reference). */
static inline PyObject *
string_keys_view(StringKeys *self)
{
    return dict_keys(self->dict, NULL);
}

static PyObject *
string_keys_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *view;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "_StringKeys() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:_StringKeys", &view)) {
        return NULL;
    }
    if (PyDictKeys_Check(view)) { /* a dict's keys view: the dict it reads */
        PyObject *dict = (PyObject *)((_PyDictViewObject *)view)->dv_dict;
        if (dict != NULL) {
            return string_keys_wrap(dict);
        }
    }
    if (PyDict_Check(view)) {
        return string_keys_wrap(view);
    }
    PyErr_Format(PyExc_TypeError, "_StringKeys() takes a dict's keys view, got %R", view);
    return NULL;
}

static int
string_keys_contains(StringKeys *self, PyObject *key)
{
    if (PyUnicode_Check(key)) {
        return PyDict_Contains(self->dict, key);
    }
    if (PyTuple_Check(key) && PyTuple_GET_SIZE(key) > 0) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
            if (!PyUnicode_Check(PyTuple_GET_ITEM(key, i))) {
                PyErr_Format(PyExc_TypeError, keys_type_error, key);
                return -1;
            }
        }
        if (PyTuple_GET_SIZE(key) == 1) {
            return PyDict_Contains(self->dict, PyTuple_GET_ITEM(key, 0));
        }
        return 0;
    }
    PyErr_Format(PyExc_TypeError, keys_type_error, key);
    return -1;
}

static Py_ssize_t
string_keys_len(StringKeys *self)
{
    return PyDict_GET_SIZE(self->dict);
}

static PyObject *
string_keys_iter(StringKeys *self)
{
    return PyObject_GetIter(self->dict); /* a dict iterates over its keys */
}

/* The dict view behind ``obj`` when it is a _StringKeys, ``obj`` otherwise (a new
 * reference either way). */
static inline PyObject *
unwrap_keys(PyObject *obj)
{
    if (Py_TYPE(obj) == StringKeysType) {
        return string_keys_view((StringKeys *)obj);
    }
    return Py_NewRef(obj);
}

/* ``call(a, b)`` on the dict views behind ``a`` and ``b`` */
static PyObject *
on_views(PyObject *a, PyObject *b, binaryfunc call)
{
    PyObject *left = unwrap_keys(a);
    if (left == NULL) {
        return NULL;
    }
    PyObject *right = unwrap_keys(b);
    if (right == NULL) {
        Py_DECREF(left);
        return NULL;
    }
    PyObject *result = call(left, right);
    Py_DECREF(left);
    Py_DECREF(right);
    return result;
}

static PyObject *
string_keys_richcompare(PyObject *self, PyObject *other, int op)
{
    PyObject *left = unwrap_keys(self);
    if (left == NULL) {
        return NULL;
    }
    PyObject *right = unwrap_keys(other);
    if (right == NULL) {
        Py_DECREF(left);
        return NULL;
    }
    PyObject *result = PyObject_RichCompare(left, right, op);
    Py_DECREF(left);
    Py_DECREF(right);
    return result;
}

#define STRING_KEYS_SET_OP(name, call)                                              \
    static PyObject *name(PyObject *a, PyObject *b)                                 \
    {                                                                               \
        return on_views(a, b, call);                                                \
    }
STRING_KEYS_SET_OP(string_keys_and, PyNumber_And)
STRING_KEYS_SET_OP(string_keys_or, PyNumber_Or)
STRING_KEYS_SET_OP(string_keys_xor, PyNumber_Xor)
STRING_KEYS_SET_OP(string_keys_sub, PyNumber_Subtract)
#undef STRING_KEYS_SET_OP

static PyObject *
string_keys_repr(StringKeys *self)
{
    PyObject *view = string_keys_view(self);
    if (view == NULL) {
        return NULL;
    }
    PyObject *text = PyUnicode_FromFormat("_StringKeys(%R)", view);
    Py_DECREF(view);
    return text;
}

static PyObject *
isdisjoint_of(PyObject *view, PyObject *other)
{
    return PyObject_CallMethod(view, "isdisjoint", "O", other);
}

static PyObject *
string_keys_isdisjoint(StringKeys *self, PyObject *other)
{
    return on_views((PyObject *)self, other, isdisjoint_of);
}

static PyObject *
string_keys_reversed(StringKeys *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *view = string_keys_view(self);
    if (view == NULL) {
        return NULL;
    }
    PyObject *result = PyObject_CallMethod(view, "__reversed__", NULL);
    Py_DECREF(view);
    return result;
}

static int
string_keys_traverse(StringKeys *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->dict);
    return 0;
}

static int
string_keys_clear(StringKeys *self)
{
    Py_CLEAR(self->dict);
    return 0;
}

static void
string_keys_dealloc(StringKeys *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    string_keys_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyMethodDef string_keys_methods[] = {
    {"isdisjoint", (PyCFunction)string_keys_isdisjoint, METH_O,
     "Whether no key is in ``other``."},
    {"__reversed__", (PyCFunction)string_keys_reversed, METH_NOARGS,
     "The keys, last first."},
    {NULL},
};

static PyType_Slot string_keys_slots[] = {
    {Py_tp_doc, "_StringKeys(view): a tensordict's keys (see tensordict/_hotreads.py)."},
    {Py_tp_new, string_keys_new},
    {Py_tp_traverse, string_keys_traverse},
    {Py_tp_clear, string_keys_clear},
    {Py_tp_dealloc, string_keys_dealloc},
    {Py_tp_repr, string_keys_repr},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_iter, string_keys_iter},
    {Py_tp_richcompare, string_keys_richcompare},
    {Py_tp_methods, string_keys_methods},
    {Py_sq_contains, string_keys_contains},
    {Py_sq_length, string_keys_len},
    {Py_nb_and, string_keys_and},
    {Py_nb_or, string_keys_or},
    {Py_nb_xor, string_keys_xor},
    {Py_nb_subtract, string_keys_sub},
    {0, NULL},
};

static PyType_Spec string_keys_spec = {
    .name = "tensordict._fastreads._StringKeys",
    .basicsize = sizeof(StringKeys),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = string_keys_slots,
};

/* td.keys() / values() / items() with no argument: the storage dict's own live view
 * (keys: wrapped as _StringKeys; values and items: where every entry reads as it is
 * stored). */
static PyObject *
storage_view(PyObject *self, PyCFunction dict_method, PyObject *python_name,
             PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             int entries)
{
    PyObject *storage = ((FastReads *)self)->storage;
    if (nargs == 0 && kwnames == NULL && storage != NULL && PyDict_CheckExact(storage) &&
        (!entries || all_plain_entries(storage))) {
        if (dict_method == dict_keys) {
            return string_keys_wrap(storage);
        }
        return dict_method(storage, NULL);
    }
    return call_python(self, python_name, args, nargs, kwnames);
}

static PyObject *
fastreads_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    return storage_view(self, dict_keys, str_keys_py, args, nargs, kwnames, 0);
}

static PyObject *
fastreads_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    return storage_view(self, dict_values, str_values_py, args, nargs, kwnames, 1);
}

static PyObject *
fastreads_items(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    return storage_view(self, dict_items, str_items_py, args, nargs, kwnames, 1);
}

/* The storage dict can hold the tensordict itself (through a nested entry's parent
 * references or a user's value), so the type takes part in garbage collection. */
static int
fastreads_traverse(FastReads *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self)); /* an instance holds its (heap) type */
    Py_VISIT(self->storage);
    return 0;
}

static int
fastreads_clear(FastReads *self)
{
    Py_CLEAR(self->storage);
    return 0;
}

static void
fastreads_dealloc(FastReads *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    fastreads_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp); /* an instance holds its (heap) type */
}

static PyMemberDef fastreads_members[] = {
    /* T_OBJECT_EX: reading it before it is set raises AttributeError, as a __slots__
     * entry does */
    {"_tensordict", T_OBJECT_EX, offsetof(FastReads, storage), 0,
     "The storage: a dict from each key of this level to its entry."},
    {NULL},
};

/* The reads install() puts in TensorDict's own class dict, as method descriptors of
 * TensorDict itself rather than methods of this base: CPython (3.11) specialises a call
 * of a C method only when the instance's type is exactly the method's own type (for a
 * method inherited from this base, every call took the generic path: ~8 ns more).
 * Each docstring starts with the text signature inspect.signature() reads (the Python
 * method's own parameters; get's default is a sentinel, so *args there). */
static PyMethodDef read_methods[] = {
    {"get", (PyCFunction)(void (*)(void))fastreads_get, METH_FASTCALL | METH_KEYWORDS,
     "get($self, key, *args, **kwargs)\n--\n\n"
     "The entry at ``key``; see TensorDict._get_py (the same, in Python)."},
    {"keys", (PyCFunction)(void (*)(void))fastreads_keys, METH_FASTCALL | METH_KEYWORDS,
     "keys($self, include_nested=False, leaves_only=False, is_leaf=None, sort=False)\n--\n\n"
     "The keys; see TensorDict._keys_py (the same, in Python)."},
    {"values", (PyCFunction)(void (*)(void))fastreads_values,
     METH_FASTCALL | METH_KEYWORDS,
     "values($self, include_nested=False, leaves_only=False, is_leaf=None, sort=False)\n"
     "--\n\nThe entries; see TensorDict._values_py (the same, in Python)."},
    {"items", (PyCFunction)(void (*)(void))fastreads_items,
     METH_FASTCALL | METH_KEYWORDS,
     "items($self, include_nested=False, leaves_only=False, is_leaf=None, sort=False)\n"
     "--\n\n(key, entry) pairs; see TensorDict._items_py (the same, in Python)."},
    {NULL},
};

/* A heap type (PyType_FromSpec) without a tp_new of its own: it inherits object's, and,
 * unlike a static type, gets no __new__ of its own in its dict. So object.__new__(
 * TensorDict) (TensorDict._new_unsafe) stays allowed, and torch.compile, which knows
 * object.__new__ but not a C type's, can still build TensorDicts in a graph. A new
 * instance's member starts NULL (unset). */
static PyType_Slot fastreads_slots[] = {
    {Py_tp_doc, "C base of TensorDict: its hot dict-like reads (tensordict/_fastreads.c)."},
    {Py_tp_traverse, fastreads_traverse},
    {Py_tp_clear, fastreads_clear},
    {Py_tp_dealloc, fastreads_dealloc},
    {Py_tp_members, fastreads_members},
    {0, NULL},
};

static PyType_Spec fastreads_spec = {
    .name = "tensordict._fastreads.FastReads",
    .basicsize = sizeof(FastReads),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = fastreads_slots,
};

static PyTypeObject *FastReadsType = NULL;

/* Point the td[key] slot of ``cls`` (a Python subclass of FastReads whose class dict
 * holds a Python __getitem__, and that defines _getitem_py) at fastreads_subscript.
 * Assigning cls.__getitem__ later resets the slot, as for any type. */
static PyObject *
install_subscript(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) ||
        !PyType_HasFeature((PyTypeObject *)cls, Py_TPFLAGS_HEAPTYPE) ||
        !PyType_IsSubtype((PyTypeObject *)cls, FastReadsType)) {
        PyErr_Format(PyExc_TypeError,
                     "expected a Python subclass of FastReads, got %R", cls);
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    type->tp_as_mapping->mp_subscript = fastreads_subscript; /* the heap type's own */
    PyType_Modified(type);
    Py_RETURN_NONE;
}

/* install(TensorDict, Tensor): the entry types returned as they are, the C reads set
 * in TensorDict's class dict (replacing the Python ones, which stay as _get_py...),
 * and td[key] pointed at C. */
static PyObject *
install(PyObject *module, PyObject *args)
{
    PyObject *cls, *tensor;
    if (!PyArg_ParseTuple(args, "O!O!:install", &PyType_Type, &cls, &PyType_Type,
                          &tensor)) {
        return NULL;
    }
    PyObject *done = install_subscript(module, cls);
    if (done == NULL) {
        return NULL;
    }
    Py_DECREF(done);
    for (PyMethodDef *def = read_methods; def->ml_name != NULL; def++) {
        PyObject *descr = PyDescr_NewMethod((PyTypeObject *)cls, def);
        if (descr == NULL) {
            return NULL;
        }
        int failed = PyObject_SetAttrString(cls, def->ml_name, descr);
        Py_DECREF(descr);
        if (failed) {
            return NULL;
        }
    }
    Py_XSETREF(tensor_type, (PyTypeObject *)Py_NewRef(tensor));
    Py_XSETREF(tensordict_type, (PyTypeObject *)Py_NewRef(cls));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"install", install, METH_VARARGS,
     "install(TensorDict, Tensor): the C reads in TensorDict's class dict."},
    {"install_subscript", install_subscript, METH_O,
     "install_subscript(cls): td[key] on instances of cls (a subclass) runs C."},
    {NULL},
};

static struct PyModuleDef fastreads_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tensordict._fastreads",
    .m_doc = "TensorDict's hot dict-like reads in C (optional; see tensordict/_hotreads.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

/* The C function of the dict method ``name``, checked to take no argument. */
static PyCFunction
dict_noargs_method(const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)&PyDict_Type, name);
    if (descr == NULL) {
        return NULL;
    }
    PyCFunction function = NULL;
    if (PyObject_TypeCheck(descr, &PyMethodDescr_Type) &&
        ((PyMethodDescrObject *)descr)->d_method->ml_flags == METH_NOARGS) {
        function = ((PyMethodDescrObject *)descr)->d_method->ml_meth;
    }
    else {
        PyErr_Format(PyExc_ImportError, "dict.%s is not the C method expected", name);
    }
    Py_DECREF(descr); /* dict's own method: it lives as long as the interpreter */
    return function;
}

PyMODINIT_FUNC
PyInit__fastreads(void)
{
    FastReadsType = (PyTypeObject *)PyType_FromSpec(&fastreads_spec);
    if (FastReadsType == NULL) {
        return NULL;
    }
#define INTERN(var, text)                                                           \
    if ((var = PyUnicode_InternFromString(text)) == NULL) {                          \
        return NULL;                                                                 \
    }
    INTERN(str_getitem_py, "_getitem_py");
    INTERN(str_get_py, "_get_py");
    INTERN(str_keys_py, "_keys_py");
    INTERN(str_values_py, "_values_py");
    INTERN(str_items_py, "_items_py");
#undef INTERN
    if ((dict_keys = dict_noargs_method("keys")) == NULL ||
        (dict_values = dict_noargs_method("values")) == NULL ||
        (dict_items = dict_noargs_method("items")) == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&fastreads_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "FastReads", (PyObject *)FastReadsType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    StringKeysType = (PyTypeObject *)PyType_FromSpec(&string_keys_spec);
    if (StringKeysType == NULL ||
        PyModule_AddObjectRef(module, "_StringKeys", (PyObject *)StringKeysType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
