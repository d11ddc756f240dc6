"""``@tensorclass`` and ``TensorClass``: dataclasses whose fields are the entries of a
tensordict, plus the classes that carry non-tensor values (``NonTensorData``,
``NonTensorStack``, ``MetaData``).

A tensorclass instance wraps one :class:`~tensordict.TensorDict` (``self._tensordict``)
that holds every field whose value is not ``None``: tensors, nested tensordicts and
tensorclasses, and non-tensor values (strings, numbers, any object) stored as they are.
A field set to ``None`` is simply absent from the tensordict. The fields are data
descriptors on the class, so ``data.image`` reads the entry and ``data.image = x`` writes
it with the tensordict's batch-size and device checks.

``TensorClass`` derives from :class:`~tensordict.base.TensorDictBase` and implements its
primitives by forwarding to the wrapped tensordict, so that a tensorclass stored inside a
tensordict (a nested field) is walked, indexed, rebuilt and compared like any nested
tensordict. The core touches tensorclasses in two places only: preallocation keeps a
written tensorclass's class, and writing non-tensor data at an index goes through
:func:`write_non_tensor_at`. The ops generated from
``spec/`` come from ``tensordict/_generated/tensorclass_ops.py`` (rendered by
``codegen/render.py``): each forwards to the wrapped tensordict
and re-wraps a tensordict result in the user's class (``TensorClass._wrap``). Every other
public method of ``TensorDict`` is forwarded the same way (``_install_forwarders``).

Non-tensor values: inside a tensordict they are stored as they are. ``NonTensorData``
(and ``MetaData``) is one such value with a batch size, as a tensorclass; stored in a
tensordict it becomes its value. ``NonTensorStack`` holds one value per batch element (a
numpy object array shaped like the batch): what stacking tensordicts whose non-tensor
entries differ gives (:func:`stack_non_tensor`); equal values stay one value.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import re
import sys
import types
import typing
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from tensordict import _errors, _modes, _tc_options, _torch_function
from tensordict._generated.tensorclass_ops import TensorClassGeneratedOps
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._registry import register
from tensordict._linked_list import entry_value
from tensordict._persistence import _ANONYMOUS as _ANONYMOUS_MEMMAP
from tensordict._repr import (
    _indent,
    compact_repr,
    printoptions,
    sorted_items,
    trailer_parts,
)
from typing_extensions import dataclass_transform
from tensordict._td import (
    _CONVERTIBLE,
    TensorDict,
    _indexed_batch_shape,
    _normalize_index,
    _parse_batch_size,
    _parse_device,
    _parse_names,
)
from tensordict._ops.batch_shape import batch_dim
from tensordict.base import NO_DEFAULT, TensorDictBase, _looks_like_key

__all__ = [
    "MetaData",
    "NonTensorData",
    "NonTensorStack",
    "TensorClass",
    "from_dataclass",
    "is_non_tensor",
    "is_tensorclass",
    "stack_non_tensor",
    "cat_non_tensor",
    "tensorclass",
    "split_non_tensor_entries",
    "stack_non_tensor_entries",
    "write_non_tensor_at",
]

_MISSING = dataclasses.MISSING


class _FactoryDefault:
    """Stands in, in a generated ``__init__`` signature, for a ``default_factory``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _FactoryDefault()


# --------------------------------------------------------------------------------------
# Fields.
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _FieldSpec:
    """What the class knows about one field."""

    name: str
    tensor: bool  # annotated as a tensor: numbers, lists and arrays become tensors
    tc_cls: (
        type | None
    )  # annotated as a tensorclass: a plain tensordict is wrapped in it
    tensordict: bool = False  # annotated as a tensordict: a dict becomes a TensorDict
    cast: type | None = None  # autocast: values are cast to this type
    nocast: bool = False  # the class's nocast option: values kept as given


_NO_NON_TENSORDICT = types.MappingProxyType({})


def _field_descriptor(name: str, default: Any) -> property:
    """The class attribute of one field: reads the entry of the wrapped tensordict
    (``None`` when absent), writes through :meth:`TensorClass._set_field`.

    A ``property`` whose getter reads the storage: CPython calls a property's getter
    without the method lookup and three-argument call of a Python ``__get__``, and
    ``data.image`` is the most frequent call on a tensorclass. Reading the live storage
    on every call (no copy on the instance) keeps every write path visible: ``set``,
    ``_tensordict`` ops, in-place ops. A field with a default is a
    :class:`_FieldWithDefault`, which the class reads as that default.
    """

    def read(obj):
        td = obj._tensordict
        if type(td) is TensorDict:
            value = td._tensordict.get(name)
        else:
            value = td._get_str(name, None, missing_ok=True)  # the value as stored
        if type(value) is Tensor:
            return value
        return entry_value(value)  # a NonTensorStack reads as a list, as td[key]

    def write(obj, value) -> None:
        obj._set_field(name, value)

    def delete(obj) -> None:
        obj._set_field(name, None)

    read.__name__ = write.__name__ = delete.__name__ = name
    if default is _MISSING:
        return _Field(read, write, delete)
    return _FieldWithDefault(read, write, delete, default)


class _Field(property):
    """A field without a default (the class reads the property, as for any property)."""


class _FieldWithDefault(_Field):
    """A field with a default: the class reads the default, as on a dataclass."""

    __slots__ = ("name", "default")

    def __init__(self, read, write, delete, default: Any) -> None:
        super().__init__(read, write, delete)
        self.name = read.__name__
        self.default = default

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.default
        # the getter's body, inlined: one Python call per read, as for the property
        td = obj._tensordict
        if type(td) is TensorDict:
            value = td._tensordict.get(self.name)
        else:
            value = td._get_str(self.name, None, missing_ok=True)  # the value as stored
        if type(value) is Tensor:
            return value
        return entry_value(value)


def _annotation_kind(annotation: Any) -> tuple[bool, type | None, bool]:
    """(is a tensor type, the tensorclass type or None, is a tensordict type) for a
    field annotation."""
    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        while True:  # drop the parameters of generics: TensorDict[str,Tensor]
            reduced = _tc_options._GENERIC.sub(r"\1", text)
            if reduced == text:
                break
            text = reduced
        parts = re.split(r"[|\[\],]", text)
        tensor = any(part in ("torch.Tensor", "Tensor") for part in parts)
        tensordict = any(part in ("TensorDict", "TensorDictBase") for part in parts)
        return tensor, None, tensordict
    candidates = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        candidates = [a for a in typing.get_args(annotation) if a is not type(None)]
    tensor = tensordict = False
    tc_cls = None
    for candidate in candidates:
        origin = typing.get_origin(candidate)
        if isinstance(origin, type):  # a generic alias: TensorDict[str, Tensor]
            candidate = origin
        if isinstance(candidate, type):
            if issubclass(candidate, Tensor):
                tensor = True
            elif issubclass(candidate, TensorClass):
                if not issubclass(candidate, NonTensorData):
                    tc_cls = candidate
            elif issubclass(candidate, TensorDictBase):
                tensordict = True
    return tensor, tc_cls, tensordict


def _reserved_names() -> frozenset[str]:
    global _RESERVED
    if _RESERVED is None:
        _RESERVED = frozenset(
            n
            for n in dir(TensorClass)
            if not n.startswith("__") and n not in _FIELD_NAMES_ALLOWED
        )
    return _RESERVED


# Members that 0.15.3 lets a field hide without ``shadow=True`` (``data`` above all).
_FIELD_NAMES_ALLOWED = frozenset({"data", "T", "mT", "real", "imag", "layout"})


_RESERVED: frozenset[str] | None = None
_INIT_PARAMS = ("batch_size", "device", "names")


def _process_class(cls: type, options: frozenset) -> None:
    """Make ``cls`` (a new subclass of TensorClass) a tensorclass: dataclass fields,
    a descriptor per field and a generated ``__init__``; ``options`` are the class
    options (``tensordict/_tc_options.py``)."""
    shadow = "shadow" in options
    cls._tc_options = options
    cls._tc_own_setattr = (
        cls.__setattr__ is not TensorClass.__setattr__ and "frozen" not in options
    )
    for flag in _tc_options.FLAGS:  # cls._autocast, cls._nocast, ... (0.15.3's names)
        setattr(cls, f"_{flag}", flag in options)
    if "frozen" in options:
        cls.__hash__ = object.__hash__  # frozen instances are hashable (by identity)
    has_doc = cls.__dict__.get("__doc__") is not None
    for name in cls.__dict__.get("__annotations__", {}):
        if name in cls.__dict__:
            continue
        inherited = getattr(cls, name, None)
        # a field named like a TensorClass member (``data``), or an inherited field
        # without a default annotated again (the class reads its property): dataclass
        # would read either as the field's default
        if (
            inherited is getattr(TensorClass, name, _MISSING)
            or type(inherited) is _Field
        ):
            setattr(cls, name, dataclasses.field())
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = [f for f in dataclasses.fields(cls)]
    reserved = _reserved_names()
    for f in fields:
        if f.name == "self" or (f.name in _INIT_PARAMS and not shadow):
            raise AttributeError(
                f"{cls.__name__}: {f.name!r} cannot be a tensorclass field: it is an "
                f"argument of the constructor"
            )
        if not shadow and f.name in reserved:
            raise AttributeError(
                f"Attribute name {f.name} can't be used with @tensorclass or "
                f"TensorClass. "
                f"{cls.__name__}: the field name {f.name!r} clashes with the "
                f"tensorclass member of that name. Rename the field, or pass "
                f"shadow=True (@tensorclass(shadow=True), or "
                f"class {cls.__name__}(TensorClass, shadow=True)) to let the field "
                f"hide the member"
            )
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable forward references: use the text
        hints = {}
    tensor_only = "tensor_only" in options
    if tensor_only:
        _tc_options.check_tensor_only(
            cls.__name__,
            {f.name: hints.get(f.name, f.type) for f in fields},
            [f.name for f in fields],
            namespace={
                **vars(sys.modules.get(cls.__module__, types)),
                **dict(vars(cls)),
            },
        )
    for f in fields:
        setattr(cls, f.name, _field_descriptor(f.name, f.default))
    # 0.15.3's set of the field names (``ClassVar`` attributes are not fields)
    cls.__expected_keys__ = {f.name for f in fields}
    _set_field_specs(cls, fields, hints, options)
    if "__init__" not in cls.__dict__:
        cls.__init__ = _make_init(cls, fields)
    if not has_doc:  # as dataclasses write it, with the constructor's real signature
        cls.__doc__ = f"{cls.__name__}{inspect.signature(cls.__init__)}".replace(
            "(self, ", "(", 1
        ).replace(" -> None", "")


def _set_field_specs(cls: type, fields: list, hints: dict, options) -> None:
    """``cls._tc_fields`` / ``_tc_field_list``: what each field's annotation says.

    An ``autocast`` class casts to the annotated types, so an annotation left as text
    (``from __future__ import annotations``) that names a class not defined yet (the
    class itself, or one defined after it) is resolved when the first instance is
    built: ``cls._tc_unresolved`` stays set until then."""
    tensor_only = "tensor_only" in options
    nocast = "nocast" in options
    autocast = "autocast" in options
    unresolved = False
    specs = []
    for f in fields:
        annotation = hints.get(f.name, f.type)
        if autocast and isinstance(annotation, str):
            resolved = _resolve_annotation(cls, annotation)
            if resolved is _MISSING:
                unresolved = True
            else:
                annotation = resolved
        tensor, tc_cls, tensordict = _annotation_kind(annotation)
        cast = None
        if autocast:
            cast = _tc_options.cast_target(annotation)
            if typing.get_origin(annotation) in (typing.Union, types.UnionType):
                tc_cls = None  # 0.15.3 casts to a tensorclass named alone only
        specs.append(
            _FieldSpec(
                f.name,
                (tensor or tensor_only) and not nocast,
                tc_cls,
                tensordict,
                cast,
                nocast,
            )
        )
    cls._tc_fields = {spec.name: spec for spec in specs}
    cls._tc_field_list = tuple(specs)
    cls._tc_unresolved = (fields, options) if unresolved else None


def _resolve_annotation(cls: type, text: str) -> Any:
    """The type an annotation written as text names, seen from the module of ``cls``
    (where ``cls`` names itself); ``_MISSING`` while a name in it is not defined."""
    namespace = dict(vars(sys.modules.get(cls.__module__, types)))
    namespace[cls.__name__] = cls
    try:
        resolved = eval(
            text, namespace
        )  # noqa: S307 - an annotation of the class's code
        if isinstance(
            resolved, str
        ):  # quoted under ``from __future__ import annotations``
            resolved = eval(resolved, namespace)  # noqa: S307
    except Exception:  # noqa: BLE001 - not defined yet (or not a type expression)
        return _MISSING
    return resolved


def _resolve_field_specs(cls: type) -> None:
    """Resolve the annotations an autocast class could not read when it was made."""
    fields, options = cls._tc_unresolved
    _set_field_specs(cls, fields, {}, options)
    cls._tc_unresolved = None  # what is still not defined stays as given


def _make_init(cls: type, fields: list) -> Callable:
    """A real ``__init__(self, <fields>, *, batch_size=None, device=None, names=None)``
    (so that ``inspect.signature`` and editors show the fields), built once per class.
    """
    namespace: dict[str, Any] = {
        "_init_instance": _init_instance,
        "_FACTORY": _FACTORY,
        "_unknown_fields": _errors.unknown_fields,
    }
    positional, keyword, factories = [], [], []
    seen_default = None
    for f in fields:
        if not f.init:
            continue
        if f.default is not _MISSING:
            namespace[f"_d_{f.name}"] = f.default
            param = f"{f.name}=_d_{f.name}"
        elif f.default_factory is not _MISSING:
            namespace[f"_f_{f.name}"] = f.default_factory
            param = f"{f.name}=_FACTORY"
            factories.append(f.name)
        else:
            param = f.name
            if seen_default is not None and not f.kw_only:
                raise TypeError(
                    f"{cls.__name__}: the field {f.name!r} has no default but follows "
                    f"{seen_default!r}, which has one"
                )
        if param != f.name and not f.kw_only:
            seen_default = f.name
        (keyword if f.kw_only else positional).append(param)
    # a field of the name of a constructor argument (shadow=True) takes its place:
    # the instance gets the default batch size / device / names
    field_names = {f.name for f in fields if f.init}
    shadowed = [p for p in _INIT_PARAMS if p in field_names]
    keyword += [f"{p}=None" for p in _INIT_PARAMS if p not in field_names]
    params = [
        "self",
        *positional,
        *(["*_extra", *keyword] if keyword else ["*_extra"]),
        "**_unknown",
    ]
    values = [f.name for f in fields if f.init]
    # an unknown keyword raises an error that is a TypeError (Python's) and an
    # AttributeError (0.15.3's), naming the fields; extra positional arguments raise
    # Python's message for them, as a dataclass's __init__ (0.15.3's) words it
    namespace["_too_many"] = _too_many_positional
    body = [
        "    if _extra:\n"
        f"        raise _too_many(type(self), {len(positional)}, len(_extra))",
        "    if _unknown:\n        raise _unknown_fields(type(self), _unknown)",
    ]
    body += [f"    if {n} is _FACTORY:\n        {n} = _f_{n}()" for n in factories]
    init_args = ", ".join("None" if p in shadowed else p for p in _INIT_PARAMS)
    body.append(
        f"    _init_instance(self, ({', '.join(values)}{',' if len(values) == 1 else ''}), "
        f"{init_args})"
    )
    source = f"def __init__({', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # noqa: S102 - the source is built from field names only
    init = namespace["__init__"]
    shown = inspect.signature(init)  # what editors and help() show: the fields only
    init.__signature__ = shown.replace(
        parameters=[
            p
            for p in shown.parameters.values()
            if p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL
        ]
    )
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _too_many_positional(cls: type, n: int, extra: int) -> TypeError:
    return TypeError(
        f"{cls.__name__}.__init__() takes {n + 1} positional arguments but "
        f"{n + 1 + extra} were given"
    )


def _init_instance(self, values, batch_size, device, names) -> None:
    cls = type(self)
    bs = _parse_batch_size(batch_size)
    dev = _parse_device(device)
    td = TensorDict._from_storage(
        {}, bs, dev, None if names is None else _parse_names(names, len(bs))
    )
    storage = td._tensordict
    n = len(bs)
    if cls._tc_unresolved is not None:  # an autocast class's first instance
        _resolve_field_specs(cls)
    if cls._tc_own_setattr:
        # a class with its own __setattr__ gets each field through it, as in 0.15.3
        _SET_TD(self, td)
        for spec, value in zip(cls._tc_field_list, values):
            if value is not None:
                setattr(self, spec.name, value)
        _finish_init(self, cls, td)
        return
    for spec, value in zip(cls._tc_field_list, values):
        if value is None:
            continue
        if spec.cast is not None:
            value = _tc_options.autocast(value, spec.cast)
        if type(value) is Tensor:
            # no batch dims (the usual case) needs no check; slicing a torch.Size
            # costs as much as the rest of this loop
            if n and value.shape[:n] != bs:
                raise _errors.batch_mismatch(spec.name, value.shape, bs)
            if dev is not None and value.device != dev:
                value = value.to(dev)
            storage[spec.name] = value
        else:
            storage[spec.name] = _convert(td, spec, value)
    _SET_TD(self, td)
    _finish_init(self, cls, td)


def _finish_init(self, cls: type, td: TensorDict) -> None:
    # looked up on the class first: a miss on the instance goes through __getattr__
    if getattr(cls, "__post_init__", None) is not None:
        self.__post_init__()
    if "frozen" in cls._tc_options:
        td.lock_()


def _convert(td: TensorDict, spec: _FieldSpec | None, value: Any) -> Any:
    """``value`` as the entry to store for a field (validated against ``td``)."""
    name = spec.name if spec is not None else None
    if isinstance(value, TensorDictBase):
        if value._is_non_tensor and isinstance(value, NonTensorData):
            return value.data
        if (
            spec is not None
            and spec.tc_cls is not None
            and not getattr(value, "_is_tensorclass", False)
        ):
            value = spec.tc_cls.from_tensordict(value)
        return td._validate(name, value)
    if isinstance(value, Tensor):
        return td._validate(name, value)
    if (
        isinstance(value, collections.abc.Mapping)
        and spec is not None
        and (spec.tc_cls is not None or spec.tensordict)
    ):
        value = _plain_mapping(value)  # UserDict and other mappings, nested too
        if spec.tc_cls is not None:
            return td._validate(
                name, spec.tc_cls.from_dict(value, batch_size=td.batch_size)
            )
        if spec.tensordict:
            return td._validate(name, value)
    if spec is not None and spec.tensor and isinstance(value, _CONVERTIBLE):
        return td._validate(name, value)
    if (
        isinstance(value, np.ndarray)
        and spec is not None
        and not spec.nocast
        and spec.cast is None  # (autocast keeps what the annotation casts to)
    ):
        return td._validate(name, value)  # an array is a tensor, whatever its field
    if type(value) is list and value and _modes.list_to_stack():
        # as a tensordict stores a list (0.15.3 too): one element per batch element
        # (numbers become a tensor, other values a NonTensorStack), checked against
        # the batch size
        return td._validate(name, value)
    return value  # non-tensor data, stored as it is


def _plain_mapping(value: collections.abc.Mapping) -> dict:
    """A mapping (``UserDict``, ...) as a ``dict``, nested mappings too; tensordicts
    and tensorclasses inside are kept as they are."""
    return {
        key: (
            _plain_mapping(item)
            if isinstance(item, collections.abc.Mapping)
            and not isinstance(item, TensorDictBase)
            else item
        )
        for key, item in value.items()
    }


def _unwrap(value: Any) -> Any:
    return value._tensordict if getattr(value, "_is_tensorclass", False) else value


# --------------------------------------------------------------------------------------
# TensorClass.
# --------------------------------------------------------------------------------------


@register
class TensorClass(TensorClassGeneratedOps, TensorDictBase):
    """Base class of tensorclasses: ``class MyData(TensorClass): image: torch.Tensor``.

    The annotated class attributes are the fields (as in a dataclass, with defaults and
    ``dataclasses.field``); the generated constructor takes them positionally or by
    keyword, plus ``batch_size``, ``device`` and ``names``. Every TensorDict op works on
    an instance and returns an instance of the class where a TensorDict would return a
    TensorDict. ``@tensorclass`` on a plain annotated class gives the same class.

    Class options (keywords of the class statement): ``shadow=True`` lets a field take
    the name of a tensorclass member; ``nocast=True`` keeps numbers given to
    tensor-annotated fields as Python values.

    >>> class Pair(TensorClass):
    ...     x: torch.Tensor
    ...     y: torch.Tensor
    >>> p = Pair(x=torch.zeros(3, 2), y=torch.ones(3), batch_size=[3])
    >>> p[1:].x.shape, type(p.float()).__name__
    (torch.Size([2, 2]), 'Pair')
    """

    __slots__ = ("_tensordict",)

    _is_tensorclass = True
    _tc_fields: dict[str, _FieldSpec] = {}
    _tc_field_list: tuple[_FieldSpec, ...] = ()
    _tc_unresolved = None  # (fields, options) of annotations to resolve at first use
    _tc_own_setattr = False  # the class defines __setattr__: fields are set through it
    # the options, as 0.15.3 names them (each tensorclass sets its own)
    _autocast = _nocast = _frozen = _tensor_only = _shadow = False
    _skip_post_init_on_rebuild = False
    # a lazy stack of instances is an instance around a LazyStackedTensorDict
    _lazy_stack_keeps_class = True
    _tc_options: frozenset = frozenset()
    _tc_templates: dict = {}

    # Called with every new tensorclass once it is made (tensordict/_pytree.py
    # registers it as a pytree node).
    _subclass_hooks: list[Callable[[type], None]] = []

    def __init_subclass__(
        cls,
        *,
        shadow: bool = False,
        nocast: bool = False,
        autocast: bool = False,
        frozen: bool = False,
        tensor_only: bool = False,
        skip_post_init_on_rebuild: bool = False,
        **kwargs,
    ):
        super().__init_subclass__(**kwargs)
        options = _tc_options.merge(
            frozenset().union(*(getattr(b, "_tc_options", ()) for b in cls.__bases__)),
            shadow=shadow,
            nocast=nocast,
            autocast=autocast,
            frozen=frozen,
            tensor_only=tensor_only,
            skip_post_init_on_rebuild=skip_post_init_on_rebuild,
        )
        _process_class(cls, options)
        for hook in TensorClass._subclass_hooks:
            hook(cls)

    def __class_getitem__(cls, flags):
        """``TensorClass["nocast"]``, ``TensorClass["frozen", "shadow"]``: a base class
        whose subclasses get those class options (``tensordict/_tc_options.py``)."""
        if cls._is_non_tensor or not _tc_options.are_flags(flags):
            if cls._is_non_tensor and isinstance(flags, type):
                return _typed_non_tensor(cls, flags)  # MetaData[int]: checks the type
            # a generic alias, as for a generic class: MetaData[str]("meta", ...)
            if cls is TensorClass or not cls._is_non_tensor:
                _tc_options.parse_flags(flags)  # raises, naming the options
            return types.GenericAlias(cls, flags)
        options = _tc_options.parse_flags(flags)
        key = (cls, tuple(flags) if isinstance(flags, tuple) else (flags,))
        template = TensorClass._tc_templates.get(key)
        if template is None:
            name = "_".join((cls.__name__,) + key[1])
            template = type(cls)(
                name,
                (cls,),
                {"__module__": cls.__module__, "__qualname__": name},
                **{option: True for option in options},
            )
            TensorClass._tc_templates[key] = template
        return template

    if not typing.TYPE_CHECKING:  # type checkers keep reporting unknown attributes

        def __getattr__(self, name: str) -> Any:
            # Called when normal lookup fails (and by code calling it directly, as
            # 0.15.3 allowed): an entry of the wrapped tensordict, else AttributeError.
            if name.startswith("__") or name == "_tensordict":
                raise AttributeError(name)
            try:
                td = object.__getattribute__(self, "_tensordict")
            except AttributeError:
                raise AttributeError(name) from None
            value = td._get_str(name, _MISSING, missing_ok=True)
            if value is _MISSING:
                if name in type(self)._tc_fields:
                    return None
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute or field {name!r}; "
                    f"its fields are {sorted(type(self)._tc_fields)}"
                )
            if type(value) is NonTensorStack and value.batch_dims:
                # as td[key] and 0.15.3: the values as a (linked) list
                return entry_value(value)
            return value

    def __init__(
        self,
        *args: Any,
        batch_size: Sequence[int] | torch.Size | int | None = None,
        device: torch.device | str | int | None = None,
        names: Sequence[str | None] | None = None,
        **fields: Any,
    ) -> None:
        # Each tensorclass gets its own generated __init__; this one serves the type
        # checkers and classes built without fields.
        values = list(args) + [None] * (len(self._tc_field_list) - len(args))
        for i, spec in enumerate(self._tc_field_list):
            if spec.name in fields:
                values[i] = fields.pop(spec.name)
        if fields or len(args) > len(self._tc_field_list):
            raise TypeError(
                f"{type(self).__name__}: unexpected arguments {sorted(fields)}"
            )
        _init_instance(self, values, batch_size, device, names)

    # ------------------------------------------------------------------ wrapping
    @classmethod
    def _from_td(cls, td: TensorDictBase):
        obj = object.__new__(cls)
        _SET_TD(obj, td)
        return obj

    def _wrap(self, result: Any) -> Any:
        """``result`` of a tensordict op, as the tensorclass would return it."""
        td = self._tensordict
        if result is td:
            return self
        kind = type(result)
        if kind is TensorDict:
            obj = object.__new__(type(self))
            _SET_TD(obj, result)
            return obj
        if kind is tuple or kind is list:
            return kind([self._wrap(r) for r in result])
        if isinstance(
            result, tuple
        ):  # torch.return_types (values, indices), namedtuples
            items = [self._wrap(r) for r in result]
            return kind(*items) if hasattr(kind, "_fields") else kind(items)
        if (
            isinstance(result, TensorDictBase)
            and not result._is_non_tensor
            and not getattr(result, "_is_tensorclass", False)
        ):
            obj = object.__new__(type(self))
            _SET_TD(obj, result)
            return obj
        return result

    @classmethod
    def _wrap_new(cls, result: Any) -> Any:
        """``result`` of a tensordict classmethod (stacking), as ``cls`` returns it."""
        kind = type(result)
        if kind is tuple or kind is list:
            return kind([cls._wrap_new(r) for r in result])
        if isinstance(result, tuple):
            items = [cls._wrap_new(r) for r in result]
            return kind(*items) if hasattr(kind, "_fields") else kind(items)
        if (
            isinstance(result, TensorDictBase)
            and not result._is_non_tensor
            and not getattr(result, "_is_tensorclass", False)
        ):
            return cls._from_td(result)
        return result

    @classmethod
    def from_tensordict(
        cls,
        tensordict: TensorDictBase,
        non_tensordict: dict | None = None,
        safe: bool | None = None,
    ):
        """An instance wrapping ``tensordict`` (not copied); ``non_tensordict`` adds
        non-tensor field values. Plain tensordicts at fields annotated with a
        tensorclass come back as that tensorclass.

        >>> class Pair(TensorClass):
        ...     x: torch.Tensor
        >>> td = TensorDict(x=torch.zeros(2), batch_size=[2])
        >>> p = Pair.from_tensordict(td)      # wraps td, no copy
        >>> p.x is td["x"]
        True
        """
        if getattr(tensordict, "_is_tensorclass", False):
            tensordict = tensordict._tensordict
        if not isinstance(tensordict, TensorDictBase):
            raise TypeError(
                f"{cls.__name__}.from_tensordict expects a tensordict, got "
                f"{type(tensordict).__name__}"
            )
        wrap = [
            spec
            for spec in cls._tc_field_list
            if spec.tc_cls is not None
            and type(tensordict._get_str(spec.name, None, missing_ok=True))
            is TensorDict
        ]
        if wrap:
            tensordict = tensordict.copy()
            for spec in wrap:
                value = tensordict._get_str(spec.name, None)
                tensordict._set_str(
                    spec.name,
                    spec.tc_cls.from_tensordict(value),
                    inplace=False,
                    validated=True,
                )
        obj = cls._from_td(tensordict)
        for key, value in (non_tensordict or {}).items():
            if value is not None:  # (None leaves the entry as the tensordict has it)
                obj._set_field(key, value)
        # as a constructor call would (0.15.3 does too); the ops that rebuild an
        # instance from their result do not
        if getattr(cls, "__post_init__", None) is not None:
            obj.__post_init__()
        return obj

    @classmethod
    def _from_tensordict(
        cls,
        tensordict: TensorDictBase,
        non_tensordict: dict | None = None,
        safe: bool = True,
        *,
        rebuild: bool = True,
    ):
        """0.15.3's private name of :meth:`from_tensordict` (code written for it
        calls it): an instance wrapping ``tensordict``, ``__post_init__`` run.

        >>> class Pair(TensorClass):
        ...     x: torch.Tensor
        >>> Pair._from_tensordict(TensorDict(x=torch.zeros(2), batch_size=[2])).x
        tensor([0., 0.])
        """
        return cls.from_tensordict(tensordict, non_tensordict, safe)

    @classmethod
    def from_dict(
        cls,
        input_dict: dict,
        *,
        batch_size=None,
        device=None,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        names=None,
    ):
        """An instance from a dict of field values (nested dicts for nested fields);
        a field the dict lacks is ``None`` (or its default), as in 0.15.3."""
        missing = {
            f.name: None
            for f in dataclasses.fields(cls)
            if f.name not in input_dict
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        }
        obj = cls(**input_dict, **missing, batch_size=batch_size, device=device)
        if batch_size is None and (auto_batch_size or batch_dims is not None):
            obj._tensordict.auto_batch_size_(batch_dims)
        if names is not None:
            obj.names = names
        return obj

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """A :class:`TensorDict` holding copies of the entries; nested tensorclasses
        become tensordicts too (``retain_none=True`` keeps ``None`` fields as entries).
        """
        out = _plain(self._tensordict.clone())
        if retain_none:
            for name in self._tc_fields:
                if name not in out._own_keys():
                    out._set_str(name, None, inplace=False, validated=True)
        return out

    # ------------------------------------------------------------------ fields
    def _set_field(self, name: str, value: Any) -> None:
        td = self._tensordict
        if value is None:
            if td._get_str(name, NO_DEFAULT, missing_ok=True) is not NO_DEFAULT:
                td._del_str(name)
            return
        spec = self._tc_fields.get(name)
        if spec is not None and spec.cast is not None:
            value = _tc_options.autocast(value, spec.cast)
        if type(value) is Tensor:
            td._set_str(name, value, inplace=False, validated=False)
            return
        td._set_str(name, _convert(td, spec, value), inplace=False, validated=True)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._tc_fields:
            if "frozen" in self._tc_options:
                raise dataclasses.FrozenInstanceError(
                    f"cannot assign to field {name!r}: {type(self).__name__} is frozen"
                )
            self._set_field(name, value)
            return
        if name[:1] == "_" or hasattr(getattr(type(self), name, None), "__set__"):
            object.__setattr__(self, name, value)
            return
        raise AttributeError(
            f"Cannot set the attribute {name!r}: {type(self).__name__} has no such "
            f"field (its fields are {sorted(self._tc_fields)})"
        )

    def __delattr__(self, name: str) -> None:
        if name in self._tc_fields and "frozen" in self._tc_options:
            raise dataclasses.FrozenInstanceError(
                f"cannot delete field {name!r}: {type(self).__name__} is frozen"
            )
        if name in self._tc_fields:
            self._set_field(name, None)
        else:
            object.__delattr__(self, name)

    # ------------------------------------------------------------------ properties
    @property
    def _non_tensordict(self) -> types.MappingProxyType:
        """0.15.3's store of the fields kept outside the tensordict: empty here, where
        every field, non-tensor data included, lives in :attr:`_tensordict` (read-only).
        """
        return _NO_NON_TENSORDICT

    @property
    def batch_size(self) -> torch.Size:
        return self._tensordict.batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        self._tensordict.batch_size = value

    @property
    def _batch_size(self) -> torch.Size:
        return self._tensordict.batch_size

    @property
    def device(self) -> torch.device | None:
        return self._tensordict.device

    @device.setter
    def device(self, value) -> None:
        raise RuntimeError(
            "device cannot be set using tensorclass.device = device, because "
            "moving the data is not an attribute assignment: use "
            "obj = obj.to(device) (or obj.clear_device_() to drop the device)"
        )

    @property
    def _device(self) -> torch.device | None:
        return self._tensordict.device

    @property
    def names(self) -> list:
        return self._tensordict.names

    @names.setter
    def names(self, value) -> None:
        self._tensordict.names = value

    @property
    def _is_locked(self) -> bool:
        return self._tensordict.is_locked

    # ------------------------------------------------------------------ indexing
    def __setitem__(self, index: Any, value: Any) -> None:
        if type(index) is str:
            if index in self._tc_fields:
                self._set_field(index, value)
            else:
                self._tensordict[index] = value
            return
        if (
            getattr(value, "_is_tensorclass", False)
            and type(value) is not type(self)
            and hasattr(value, "_tc_fields")
            and value._tc_fields.keys() != self._tc_fields.keys()
        ):
            raise ValueError(
                f"__setitem__ is only allowed for same-class or compatible class (i.e. "
                f"same members) assignment: cannot write a {type(value).__name__} "
                f"(fields {sorted(value._tc_fields)}) into a {type(self).__name__} "
                f"(fields {sorted(self._tc_fields)})"
            )
        self._tensordict[index] = _unwrap(value)

    def set(
        self, key, item, inplace: bool = False, *, non_blocking: bool = False, **kwargs
    ):
        """Write ``item`` at ``key``; a field name goes through the field's conversion
        (non-tensor values of non-tensor fields are kept as they are)."""
        if type(key) is str and key in self._tc_fields and not inplace:
            self._set_field(key, item)
            return self
        self._tensordict.set(
            key, _unwrap(item), inplace, non_blocking=non_blocking, **kwargs
        )
        return self

    def get(self, key, *args, **kwargs):
        """The entry at ``key``, as the attribute reads it: a non-tensor field gives
        its value (not a ``NonTensorData``), ``"batch_size"``, ``"device"``,
        ``"names"`` and ``"shape"`` give those attributes (0.15.3 reads them so);
        a missing key gives the default (``None`` unless one is passed).

        >>> class Sample(TensorClass):
        ...     obs: torch.Tensor
        ...     label: str
        >>> s = Sample(obs=torch.zeros(2, 3), label="cat", batch_size=[2])
        >>> s.get("label"), s.get("batch_size"), s.get(("obs",)).shape
        ('cat', torch.Size([2]), torch.Size([2, 3]))
        """
        if type(key) is tuple and len(key) == 1:
            key = key[0]
        if type(key) is str:
            if (
                key in _ATTRIBUTE_KEYS
                and key not in self._tc_fields
                and key not in self._tensordict._own_keys()
            ):
                return getattr(self, key)
        elif type(key) is tuple and key and type(key[0]) is str:
            first = self._tensordict._get_str(key[0], None, missing_ok=True)
            if getattr(first, "_is_tensorclass", False) and not first._is_non_tensor:
                return first.get(key[1:], *args, **kwargs)
            return self._tensordict.get(key, *args, **kwargs)  # a tensordict's entry
        value = self._tensordict.get(key, *args, **kwargs)
        if isinstance(value, NonTensorData):
            return value.data
        return value

    def select(
        self,
        *keys,
        inplace: bool = False,
        strict: bool = True,
        as_tensordict: bool = False,
    ):
        """An instance holding only ``keys`` (the other fields read ``None``);
        ``as_tensordict=True`` gives a plain :class:`TensorDict` of those keys.

        >>> class Pair(TensorClass):
        ...     x: torch.Tensor
        ...     y: torch.Tensor
        >>> p = Pair(x=torch.zeros(2), y=torch.ones(2), batch_size=[2])
        >>> p.select("x").y is None, type(p.select("x", as_tensordict=True)).__name__
        (True, 'TensorDict')
        """
        result = self._tensordict.select(*keys, inplace=inplace, strict=strict)
        if as_tensordict and not inplace:
            return _plain(result.copy()) if type(result) is TensorDict else result
        return self._wrap(result)

    @property
    def _consolidated(self):
        """The storage block of a consolidated instance (its tensordict's)."""
        storage = getattr(self._tensordict, "_consolidated", None)
        if storage is None:
            raise AttributeError("_consolidated: this instance is not consolidated")
        return storage

    # ------------------------------------------------------------------ primitives
    # What the core calls on a nested container (docs/architecture.md): forwarded.
    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        return self._tensordict._get_str(key, default, missing_ok=missing_ok)

    def _set_str(
        self,
        key: str,
        value: Any,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        if key in self._tc_fields and not validated and not inplace:
            self._set_field(key, value)  # the field's conversion; None removes it
            return
        self._tensordict._set_str(key, value, inplace=inplace, validated=validated)

    def _del_str(self, key: str) -> None:
        self._tensordict._del_str(key)

    def _own_items(self):
        return self._tensordict._own_items()

    def _own_keys(self):
        return self._tensordict._own_keys()

    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        # the wrapped tensordict's walk (a lazy stack lists keys without stacking)
        return self._tensordict._walk(include_nested, leaves_only, is_leaf, with_values)

    def _own_values(self):
        return self._tensordict._own_values()

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        return self._wrap(self._tensordict._new_empty(batch_size, device, names))

    def _index(self, index):
        return self._wrap(self._tensordict._index(index))

    def _set_at_index(self, index, value) -> None:
        self._tensordict._set_at_index(index, _unwrap(value))

    def _leaves(self) -> list[Tensor]:
        return self._tensordict._leaves()

    def _leaves_and_rebuild(self):
        leaves, rebuild = self._tensordict._leaves_and_rebuild()
        wrap = self._wrap

        def rebuild_tc(new_leaves, **kwargs):
            return wrap(rebuild(new_leaves, **kwargs))

        return leaves, rebuild_tc

    def _batched_leaves_and_rebuild(self):
        leaves, rebuild = self._tensordict._batched_leaves_and_rebuild()
        wrap = self._wrap

        def rebuild_tc(new_leaves, **kwargs):
            return wrap(rebuild(new_leaves, **kwargs))

        return leaves, rebuild_tc

    def _holds_lazy_stack(self) -> bool:
        return self._tensordict._holds_lazy_stack()

    def _with_dense_stacks(self, op: str, key: tuple = (), outer_dims=None):
        dense = self._tensordict._with_dense_stacks(op, key, outer_dims)
        return self if dense is self._tensordict else self._wrap(dense)

    def _operand_leaves(self, other, op: str, default=None) -> list:
        return self._tensordict._operand_leaves(_unwrap(other), op, default)

    def _moved_to(self, device):
        return self._wrap(self._tensordict._moved_to(device))

    def _set_lock(self, locked: bool) -> None:
        self._tensordict._set_lock(locked)

    def _replace_contents(self, other) -> None:
        self._tensordict._replace_contents(_unwrap(other))

    def _apply(self, fn, others, **kwargs):
        others = [_unwrap(o) for o in others]
        return self._wrap(self._tensordict._apply(fn, others, **kwargs))

    def __enter__(self):
        self._tensordict.__enter__()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        return self._tensordict.__exit__(exc_type, exc_val, exc_tb)

    # ------------------------------------------------------------------ torch.*
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """``torch.X(...)`` with tensorclasses among the arguments: the tensordict
        implementation runs on the wrapped tensordicts, and tensordict results come
        back as the class of the first tensorclass argument."""
        found: list = []
        args = tuple(_unwrap_tensorclasses(a, found) for a in args)
        if kwargs:
            kwargs = {k: _unwrap_tensorclasses(v, found) for k, v in kwargs.items()}
        else:
            kwargs = {}
        result = _torch_function.dispatch(func, types, args, kwargs)
        if result is NotImplemented or not found:
            return result
        return found[0]._wrap(result)

    # ------------------------------------------------------------------ misc
    def __getstate__(self):
        state = dict(getattr(self, "__dict__", {}))
        state["_tensordict"] = self._tensordict
        return state

    def __setstate__(self, state) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        if printoptions()["compact"]:
            return compact_repr(self)
        td = self._tensordict
        items = dict(td._own_items())
        for name in self._tc_fields:
            items.setdefault(name, None)
        lines = [
            f"{key}={_field_repr(value)}" for key, value in sorted_items(items.items())
        ]
        lines += trailer_parts(td)
        return (
            f"{type(self).__name__}(\n" + ",\n".join(_indent(l, 1) for l in lines) + ")"
        )


_TYPED_NON_TENSOR: dict = {}


def _typed_non_tensor(cls: type, data_type: type) -> type:
    """``MetaData[int]`` (any non-tensor class with a type): a subclass, made once per
    class and type, whose instances must hold a value of that type (``TypeError``
    otherwise, with 0.15.3's phrase); ``isinstance`` and ``issubclass`` work with it."""
    key = (cls, data_type)
    typed = _TYPED_NON_TENSOR.get(key)
    if typed is None:

        def __init__(self, data: Any = None, *args, **kwargs) -> None:
            value = data.data if isinstance(data, NonTensorData) else data
            if not isinstance(value, data_type):
                raise TypeError(
                    f"Expected data of type {data_type.__name__}, got "
                    f"{type(value).__name__}: {name} holds {data_type.__name__} values"
                )
            cls.__init__(self, data, *args, **kwargs)

        name = f"{cls.__name__}[{data_type.__name__}]"
        typed = type(cls)(
            name,
            (cls,),
            {
                "__init__": __init__,
                "__module__": cls.__module__,
                "__qualname__": name,
                "_data_type": data_type,
            },
            shadow=True,
        )
        _TYPED_NON_TENSOR[key] = typed
    return typed


def _unwrap_tensorclasses(value, found: list):
    """``value`` with each tensorclass (also inside lists and tuples) replaced by its
    tensordict, the tensorclasses appended to ``found``. A module function, not a
    closure: a closure that calls itself is a reference cycle, which kept every
    call's arguments alive until the garbage collector ran."""
    if getattr(value, "_is_tensorclass", False):
        found.append(value)
        return value._tensordict
    if type(value) is list or type(value) is tuple:
        return type(value)(_unwrap_tensorclasses(v, found) for v in value)
    return value


def _SET_TD(obj: TensorClass, td: TensorDictBase) -> None:
    # object.__setattr__ rather than the slot's __set__, which torch.compile cannot
    # trace
    object.__setattr__(obj, "_tensordict", td)


def _field_repr(value: Any) -> str:
    if isinstance(value, Tensor):
        name = "Tensor" if type(value) is Tensor else type(value).__name__
        return f"{name}({value.shape!r}, dtype={value.dtype})"
    return repr(value)


def _plain(td: TensorDictBase) -> TensorDictBase:
    """``td`` (a fresh copy) with nested tensorclasses replaced by their tensordicts."""
    if type(td) is not TensorDict:
        return td
    storage = td._tensordict
    for key, value in storage.items():
        if getattr(value, "_is_tensorclass", False) and not value._is_non_tensor:
            storage[key] = _plain(value._tensordict)
        elif type(value) is TensorDict:
            _plain(value)
    return td


# Keys ``TensorClass.get`` reads as attributes, as 0.15.3 does.
_ATTRIBUTE_KEYS = frozenset({"batch_size", "device", "names", "shape"})


# Names TensorClass keeps from TensorDictBase as they are (they read the properties above).
_NATIVE = frozenset(
    {"shape", "batch_dims", "ndim", "dim", "ndimension", "numel", "size", "is_locked"}
)


# Methods that return entries (a nested tensordict is returned as it is, not re-wrapped).
_RETURNS_ENTRIES = frozenset(
    {"get", "pop", "popitem", "setdefault", "create_nested", "keys", "items", "values"}
)


def _forwarder(name: str) -> Callable:
    target = getattr(TensorDict, name)
    if name in _RETURNS_ENTRIES:

        @_wraps(target)
        def method(self, *args, **kwargs):
            return getattr(self._tensordict, name)(*args, **kwargs)

        method._tc_forwarded = "entries"
        return method

    @_wraps(target)
    def method(self, *args, **kwargs):
        args = tuple(_unwrap(a) for a in args)
        return self._wrap(getattr(self._tensordict, name)(*args, **kwargs))

    method._tc_forwarded = "wrapped"
    return method


def _wraps(target: Callable) -> Callable:
    """``functools.wraps(target)``; a C method (TensorDict's reads in C,
    ``tensordict/_hotreads.py``) is not recorded as ``__wrapped__``: tools that unwrap
    (``doctest`` on Python 3.12+, ``inspect``) expect a Python function there."""
    wraps = functools.wraps(target)
    if hasattr(target, "__code__"):
        return wraps

    def decorate(method: Callable) -> Callable:
        method = wraps(method)
        del method.__wrapped__
        return method

    return decorate


def _class_forwarder(name: str) -> classmethod:
    target = getattr(TensorDict, name)

    @_wraps(target)
    def method(cls, *args, **kwargs):
        args = tuple(_unwrap_items(a) for a in args)
        return cls._wrap_new(getattr(TensorDict, name)(*args, **kwargs))

    method._tc_forwarded = "class"
    return classmethod(method)


def _unwrap_items(value: Any) -> Any:
    if type(value) is list or type(value) is tuple:
        return type(value)(_unwrap(v) for v in value)
    return _unwrap(value)


def _install_forwarders() -> None:
    """Every public method of TensorDict that TensorClass and the generated ops do not
    define: forwarded to the wrapped tensordict (classmethods: to TensorDict), results
    re-wrapped."""
    # what TensorClass, its generated ops and its feature mixins define is its own
    own = {
        name
        for klass in TensorClass.__mro__
        if klass not in (TensorDictBase, object)
        for name in vars(klass)
    }
    for name in dir(TensorDict):
        if name.startswith("_") or name in own or name in _NATIVE:
            continue
        attr = inspect.getattr_static(TensorDict, name)
        if isinstance(attr, classmethod):
            setattr(TensorClass, name, _class_forwarder(name))
            continue
        if isinstance(attr, (property, staticmethod)) or not callable(attr):
            continue
        setattr(TensorClass, name, _forwarder(name))


_install_forwarders()


def _forwarded_names() -> tuple[list, list, list, list]:
    """What tensorclasses take from TensorDict, as the four sorted, disjoint lists
    0.15.3 keeps under the names below (code reads them to tell which methods a
    tensorclass forwards): the methods forwarded whose results are re-wrapped, those
    returned as they are (entries), the classmethods, and the generated ops."""
    lists = {"wrapped": [], "entries": [], "class": []}
    for name, attr in vars(TensorClass).items():
        kind = getattr(getattr(attr, "__func__", attr), "_tc_forwarded", None)
        if kind is not None and not name.startswith("_"):
            lists[kind].append(name)
    wrapped, nowrap, classmethods = lists["wrapped"], lists["entries"], lists["class"]
    generated = [n for n in vars(TensorClassGeneratedOps) if not n.startswith("_")]
    return sorted(wrapped), sorted(nowrap), sorted(classmethods), sorted(generated)


(
    _FALLBACK_METHOD_FROM_TD,
    _FALLBACK_METHOD_FROM_TD_NOWRAP,
    _FALLBACK_METHOD_FROM_TD_FORCE,
    _METHOD_FROM_TD,
) = _forwarded_names()


# --------------------------------------------------------------------------------------
# The decorator and helpers.
# --------------------------------------------------------------------------------------


def _fix_class_cells(namespace: dict, old: type, new: type) -> None:
    """Point the ``__class__`` cells of the methods (zero-argument ``super()``) at the
    class that replaces ``old``."""
    for value in namespace.values():
        funcs = []
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        if isinstance(value, property):
            funcs = [value.fget, value.fset, value.fdel]
        else:
            funcs = [value]
        for func in funcs:
            code = getattr(func, "__code__", None)
            if code is None or not func.__closure__:
                continue
            for cell_name, cell in zip(code.co_freevars, func.__closure__):
                if cell_name == "__class__" and cell.cell_contents is old:
                    cell.cell_contents = new


@dataclass_transform()
def tensorclass(
    cls: type | None = None,
    /,
    *,
    shadow: bool = False,
    nocast: bool = False,
    autocast: bool = False,
    frozen: bool = False,
    tensor_only: bool = False,
    skip_post_init_on_rebuild: bool = False,
):
    """Make an annotated class a tensorclass (``@tensorclass`` or
    ``@tensorclass(shadow=True)``): the same as deriving it from :class:`TensorClass`.

    >>> @tensorclass
    ... class MyData:
    ...     image: torch.Tensor
    ...     label: str = "none"
    >>> data = MyData(torch.zeros(4, 3), batch_size=[4])
    >>> data[:2].image.shape, data.label
    (torch.Size([2, 3]), 'none')
    """

    options = dict(
        shadow=shadow,
        nocast=nocast,
        autocast=autocast,
        frozen=frozen,
        tensor_only=tensor_only,
        skip_post_init_on_rebuild=skip_post_init_on_rebuild,
    )

    def wrap(cls: type) -> type:
        if issubclass(cls, TensorClass):
            _process_class(cls, _tc_options.merge(cls._tc_options, **options))
            return cls
        namespace = dict(cls.__dict__)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        # where pickle finds the class: a class defined inside another keeps its path
        namespace["__qualname__"] = cls.__qualname__
        for slot in namespace.get("__slots__", ()):
            namespace.pop(slot, None)
        bases = tuple(b for b in cls.__bases__ if b is not object) + (TensorClass,)
        new = type(cls)(cls.__name__, bases, namespace, **options)
        _fix_class_cells(namespace, cls, new)
        return new

    return wrap if cls is None else wrap(cls)


def is_tensorclass(obj: Any) -> bool:
    """True for a tensorclass (the class or an instance).

    >>> @tensorclass
    ... class Point:
    ...     x: torch.Tensor
    >>> is_tensorclass(Point), is_tensorclass(Point(x=torch.zeros(2), batch_size=[2]))
    (True, True)
    >>> is_tensorclass(TensorDict())
    False
    """
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, TensorClass)


def is_non_tensor(obj: Any) -> bool:
    """True for NonTensorData, MetaData and NonTensorStack (classes or instances).

    >>> is_non_tensor(NonTensorData("text")), is_non_tensor(torch.zeros(2))
    (True, False)
    """
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, TensorDictBase) and cls._is_non_tensor


_DATACLASS_TC: dict[type, type] = {}


def _tensorclass_for(dc: type, **options: bool) -> type:
    """The tensorclass with the fields of the dataclass ``dc`` and the class
    ``options`` set to True (made once per dataclass and options)."""
    flags = tuple(sorted(name for name, on in options.items() if on))
    cls = _DATACLASS_TC.get((dc, flags))
    if cls is None:
        annotations = {f.name: f.type for f in dataclasses.fields(dc)}
        namespace = {
            "__annotations__": annotations,
            "__module__": dc.__module__,
            "__qualname__": f"{dc.__qualname__}_tc",
            **{name: None for name in annotations},
        }
        cls = type(
            f"{dc.__name__}_tc",
            (TensorClass,),
            namespace,
            shadow=True,
            **{flag: True for flag in flags},
        )
        _DATACLASS_TC[(dc, flags)] = cls
    return cls


def from_dataclass(
    obj: Any,
    *,
    dest_cls: type | None = None,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size=None,
    device=None,
    nocast: bool = False,
    autocast: bool = False,
    tensor_only: bool = False,
    frozen: bool = False,
):
    """A tensorclass instance holding the fields of the dataclass instance ``obj``;
    given a dataclass type, the tensorclass type itself.

    The class is ``dest_cls`` if given, else a tensorclass ``<Name>_tc`` with the
    dataclass's fields and the class options ``nocast``, ``autocast``,
    ``tensor_only``, ``frozen`` (made once per dataclass and options). Nested dataclass
    instances are converted too. ``auto_batch_size=True`` sets the batch size to the
    leading dims the tensors share (at most ``batch_dims``).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Sample:
    ...     obs: torch.Tensor
    ...     step: int
    >>> tc = from_dataclass(Sample(obs=torch.zeros(4, 2), step=3), auto_batch_size=True)
    >>> tc.obs.shape, tc.step, tc.batch_size  # all the dims its one tensor has
    (torch.Size([4, 2]), 3, torch.Size([4, 2]))
    """
    options = dict(
        nocast=nocast, autocast=autocast, tensor_only=tensor_only, frozen=frozen
    )
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        if is_tensorclass(obj):
            return obj
        return _tensorclass_for(obj, **options)
    if not dataclasses.is_dataclass(obj):
        raise TypeError(
            f"from_dataclass expects a dataclass instance or type, got "
            f"{type(obj).__name__}"
        )
    if is_tensorclass(obj):
        return obj
    cls = dest_cls if dest_cls is not None else _tensorclass_for(type(obj), **options)
    values = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = from_dataclass(
                value,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
                batch_size=batch_size,
                device=device,
            )
        values[f.name] = value
    if auto_batch_size and batch_size is None:
        out = cls(**values, device=device)
        for value in values.values():
            if getattr(value, "_is_tensorclass", False):
                value._tensordict.auto_batch_size_(batch_dims)
        out._tensordict.auto_batch_size_(batch_dims)
        return out
    return cls(**values, batch_size=batch_size, device=device)


# TensorDict.from_dataclass(as_tensorclass=True) reaches this function through the
# registry (tensordict/_conversions.py sits below this module).
TensorClass._from_dataclass = staticmethod(from_dataclass)


# --------------------------------------------------------------------------------------
# Non-tensor data.
# --------------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Whether two non-tensor values are the same value (``==`` giving a plain True)."""
    if a is b:
        return True
    try:
        result = a == b
    except Exception:  # noqa: BLE001 - values that cannot be compared differ
        return False
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    return False


def _all_same(values: Sequence[Any]) -> bool:
    """Whether ``values`` (a sequence or a flat object array) is not empty and holds
    one value only: the test that keeps one value instead of a stack of copies."""
    return len(values) > 0 and all(_same(v, values[0]) for v in values[1:])


def _object_array(value: Any, shape: Sequence[int] = ()) -> np.ndarray:
    """A numpy object array of ``shape`` holding ``value`` in every element (a list
    or an array value is one element, not spread)."""
    array = np.empty(tuple(shape), dtype=object)
    array.fill(value)
    return array


def _as_array(value: Any, batch_size: Sequence[int]) -> np.ndarray:
    """A non-tensor entry (raw value, NonTensorData or NonTensorStack) as an object
    array shaped like ``batch_size``."""
    if isinstance(value, NonTensorStack):
        values = value._values
        if values.shape != tuple(batch_size):
            values = np.broadcast_to(values, tuple(batch_size))
        return values
    if isinstance(value, NonTensorData):
        value = value.data
    return _object_array(value, batch_size)


def _raw(value: Any) -> Any:
    return value.data if isinstance(value, NonTensorData) else value


def stack_non_tensor(values: Sequence[Any], dim: int = 0, batch_size=None) -> Any:
    """The entry a stack of tensordicts holds for non-tensor entries ``values`` (raw
    values, NonTensorData or NonTensorStacks of tensordicts of batch size
    ``batch_size``, stacked along ``dim``): the value itself when every one is the same
    value, else a :class:`NonTensorStack` with one value per element.

    >>> stack_non_tensor(["cat", "cat"])               # the same value: kept as is
    'cat'
    >>> stacked = stack_non_tensor(["cat", "dog"], dim=0, batch_size=[2])
    >>> type(stacked).__name__, stacked.batch_size, stacked.tolist()
    ('NonTensorStack', torch.Size([2, 2]), [['cat', 'cat'], ['dog', 'dog']])
    """
    values = list(values)
    if not values:
        raise ValueError("stack_non_tensor needs at least one value")
    if not any(isinstance(v, NonTensorStack) for v in values):
        raws = [_raw(v) for v in values]
        if _all_same(raws):
            return raws[0]
    bs = tuple(_parse_batch_size(batch_size)) if batch_size is not None else None
    if bs is None:
        shapes = {
            tuple(v.batch_size)
            for v in values
            if isinstance(v, (NonTensorStack, NonTensorData))
        }
        bs = shapes.pop() if len(shapes) == 1 else ()
    ndim = len(bs) + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"stack dim {dim} is out of range for {ndim} dims")
    arrays = [_as_array(v, bs) for v in values]
    return NonTensorStack._from_array(np.stack(arrays, axis=dim % ndim))


def cat_non_tensor(values: Sequence[Any], dim: int, batch_sizes: Sequence) -> Any:
    """The entry a concatenation of tensordicts (of batch sizes ``batch_sizes``, along
    ``dim``) holds for the non-tensor entries ``values``: one value when all are the
    same value, else a :class:`NonTensorStack`.

    >>> cat_non_tensor(["cat", "cat"], dim=0, batch_sizes=[[2], [3]])
    'cat'
    >>> joined = cat_non_tensor(["cat", "dog"], dim=0, batch_sizes=[[2], [1]])
    >>> type(joined).__name__, joined.tolist()
    ('NonTensorStack', ['cat', 'cat', 'dog'])
    """
    values = list(values)
    if not any(isinstance(v, NonTensorStack) for v in values):
        raws = [_raw(v) for v in values]
        if _all_same(raws):
            return raws[0]
    arrays = [_as_array(v, tuple(bs)) for v, bs in zip(values, batch_sizes)]
    ndim = arrays[0].ndim
    return NonTensorStack._from_array(np.concatenate(arrays, axis=dim % max(ndim, 1)))


def stack_non_tensor_entries(
    tds: Sequence, out: Any, dim: int, op: str = "stack"
) -> Any:
    """Finish a stack (``op="stack"``) or concatenation (``op="cat"``) of the
    tensordicts ``tds`` along batch dim ``dim`` whose result ``out`` was rebuilt from
    ``tds[0]``: every non-tensor entry of ``out`` (at any depth) becomes the stack of
    the entries of all of ``tds`` (:func:`stack_non_tensor`, :func:`cat_non_tensor`):
    one value where they are the same, a :class:`NonTensorStack` where they differ.
    Returns ``out``.

    >>> tds = [
    ...     TensorDict(x=torch.zeros(2), label="left", batch_size=[2]),
    ...     TensorDict(x=torch.ones(2), label="right", batch_size=[2]),
    ... ]
    >>> out = TensorDict(x=torch.stack([td["x"] for td in tds]), label="left", batch_size=[2, 2])
    >>> out = stack_non_tensor_entries(tds, out, dim=0)
    >>> out.get("label").tolist()
    [['left', 'left'], ['right', 'right']]
    """
    if len(tds) > 1:
        _merge_non_tensor(list(tds), out, dim, op)
    return out


def _entries_but_tensors(td) -> list:
    """``td``'s own entries, but for a lazy stack without reading (stacking) its
    tensors, whose shapes may differ from member to member."""
    member_values = getattr(td, "_member_values", None)
    if member_values is None:
        return list(td._own_items())
    out = []
    for key in list(td._own_keys()):
        vals = member_values(key)
        if vals and isinstance(vals[0], Tensor):
            continue
        out.append((key, td._get_str(key, None, missing_ok=True)))
    return out


def _merge_non_tensor(tds: list, out: Any, dim: int, op: str) -> None:
    out = _unwrap(out)
    tds = [_unwrap(td) for td in tds]
    if type(out) is TensorDict and all(type(td) is TensorDict for td in tds):
        items = out._tensordict.items()
        sources = [td._tensordict for td in tds]  # dense: read the storage directly
    else:
        items = _entries_but_tensors(out)
        sources = None
    changes = []
    for key, value in items:
        if type(value) is Tensor:
            continue
        if sources is not None:
            values = [source.get(key) for source in sources]
        else:
            values = [td._get_str(key, None, missing_ok=True) for td in tds]
        if isinstance(value, Tensor):
            continue
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            if all(isinstance(v, TensorDictBase) for v in values):
                _merge_non_tensor(values, value, dim, op)
            continue
        if op == "stack":
            merged = stack_non_tensor(values, dim, tds[0].batch_size)
        else:
            merged = cat_non_tensor(values, dim, [td.batch_size for td in tds])
        if merged is not value:
            changes.append((key, merged))
    for key, merged in changes:
        out._set_str(key, merged, inplace=False, validated=True)


def split_non_tensor_entries(td: Any, results: Sequence, dim: int) -> None:
    """After ``td`` was cut along batch dim ``dim`` into ``results`` (in order: split,
    chunk, tensor_split, or unbind when the results lack the dim), give each result
    its part of every :class:`NonTensorStack` of ``td`` (at any depth).

    >>> td = TensorDict(x=torch.arange(4), batch_size=[4])
    >>> td["label"] = NonTensorStack("a", "b", "c", "d")
    >>> halves = [
    ...     TensorDict(x=td["x"][:2], label="?", batch_size=[2]),
    ...     TensorDict(x=td["x"][2:], label="?", batch_size=[2]),
    ... ]
    >>> split_non_tensor_entries(td, halves, dim=0)
    >>> [half.get("label").tolist() for half in halves]
    [['a', 'b'], ['c', 'd']]
    """
    if not results:
        return
    squeeze = len(results[0].batch_size) < len(td.batch_size)
    for key, value in list(td._own_items()):
        if not isinstance(value, TensorDictBase):
            continue
        parts = [r._get_str(key, None, missing_ok=True) for r in results]
        if not value._is_non_tensor:
            if all(isinstance(p, TensorDictBase) for p in parts):
                split_non_tensor_entries(value, parts, dim)
            continue
        if not isinstance(value, NonTensorStack):
            continue
        start = 0
        for result in results:
            size = 1 if squeeze else result.batch_size[dim]
            cut = start if squeeze else slice(start, start + size)
            result._set_str(
                key,
                value._index((slice(None),) * dim + (cut,)),
                inplace=False,
                validated=True,
            )
            start += size


_COMPARISONS = {
    "eq": (_same, torch.eq),
    "ne": (lambda a, b: not _same(a, b), torch.ne),
    "xor": (lambda a, b: bool(a ^ b), torch.bitwise_xor),
    "or": (lambda a, b: bool(a | b), torch.bitwise_or),
}


def compare_non_tensor(a: Any, b: Any, batch_size, op: str) -> Tensor | None:
    """``a OP b`` for two non-tensor entries of a batch of ``batch_size`` (raw values,
    NonTensorData or NonTensorStacks), ``op`` one of ``"eq"``, ``"ne"``, ``"xor"``,
    ``"or"``: a boolean tensor of the batch size, element by element (0.15.3 compares
    non-tensor data so). A number against a tensor gives the tensor op. ``None`` when
    the operator does not apply to the values (``"a" ^ "b"``)."""
    on_values, on_tensors = _COMPARISONS[op]
    if isinstance(b, Tensor):
        a = _raw(a)
        if isinstance(a, (bool, int, float, complex, np.number)):
            return on_tensors(torch.as_tensor(a, device=b.device), b)
        return None
    shape = tuple(batch_size)
    try:
        if not isinstance(a, NonTensorStack) and not isinstance(b, NonTensorStack):
            return torch.full(shape, bool(on_values(_raw(a), _raw(b))))
        mine = _as_array(a, shape).reshape(-1)
        theirs = _as_array(b, shape).reshape(-1)
        flags = [bool(on_values(x, y)) for x, y in zip(mine, theirs)]
    except Exception:  # noqa: BLE001 - values the operator does not apply to
        return None
    return torch.tensor(flags, dtype=torch.bool).reshape(shape)


def write_non_tensor_at(existing: Any, index: Any, value: Any, batch_size) -> Any:
    """The entry a tensordict holds after ``value`` is written at batch ``index`` of its
    non-tensor entry ``existing`` (a raw value): ``existing`` itself when ``value`` is
    the same value, the new value when it covers every element, else a
    :class:`NonTensorStack` with one value per element.

    >>> write_non_tensor_at("cat", 1, "cat", batch_size=[3])            # unchanged
    'cat'
    >>> write_non_tensor_at("cat", slice(None), "dog", batch_size=[3])  # every element
    'dog'
    >>> write_non_tensor_at("cat", 1, "dog", batch_size=[3]).tolist()   # one element
    ['cat', 'dog', 'cat']
    """
    if not isinstance(value, NonTensorStack):
        value = _raw(value)
        if _same(existing, value):
            return existing
    stack = NonTensorStack._from_array(_object_array(existing, tuple(batch_size)))
    stack._set_at_index(index, value)
    flat = stack._values.reshape(-1)
    if _all_same(flat):
        return flat[0]
    return stack


@register
class NonTensorData(TensorClass, shadow=True):
    """One non-tensor value (a string, a number, any object) with a batch size: every
    element of the batch holds ``data``.

    Indexing, reshaping and moving keep the value; stacking NonTensorData gives one
    NonTensorData when the values are the same value, a :class:`NonTensorStack` when
    they differ. Written into a tensordict, a NonTensorData is stored as its value.

    >>> nd = NonTensorData("hello", batch_size=[3])
    >>> nd[0].data, nd.tolist()
    ('hello', ['hello', 'hello', 'hello'])
    """

    data: Any
    _is_non_tensor = True

    def __init__(
        self,
        data: Any = None,
        _metadata: dict | None = None,
        _is_non_tensor: bool = True,
        *,
        batch_size=None,
        device=None,
        names=None,
    ) -> None:
        if isinstance(data, NonTensorData):
            data = data.data
        bs = _parse_batch_size(batch_size)
        td = TensorDict._from_storage(
            {"data": data},
            bs,
            _parse_device(device),
            None if names is None else _parse_names(names, len(bs)),
        )
        _SET_TD(self, td)

    def _entry_for(self, key, batch_size, device) -> Any:
        """What a tensordict stores when this is written at ``key``: the value."""
        return self.data

    def _wrap(self, result: Any) -> Any:
        # an op that gave the value one element per batch element (expand,
        # unsqueeze...) gives that NonTensorStack itself, as 0.15.3
        out = super()._wrap(result)
        if isinstance(out, NonTensorData):
            td = out._tensordict
            inner = td._get_str("data", None, missing_ok=True)
            if isinstance(inner, NonTensorStack) and inner.batch_size == td.batch_size:
                if type(self) is not NonTensorData:  # MetaData: one value for all
                    try:
                        value = inner.data
                    except AttributeError:
                        return inner
                    return type(self)(value, batch_size=td.batch_size, device=td.device)
                return inner
        return out

    def _link_to(self, parent: TensorDictBase, key: str) -> None:
        """Made by ``parent.get(key)`` (a tensordict stores the value itself): as
        0.15.3's stored NonTensorData, this one takes the parent's state (locked,
        shared, memory-mapped) and writes its new value through to the parent
        (``update_``, ``update(inplace=True)``, ``set_``)."""
        object.__setattr__(self, "_parent_entry", (parent, key))
        if parent._is_locked:
            td = self._tensordict
            td._is_locked = True
            if getattr(parent, "_shared_mark", False):
                td._shared_mark = True
            if getattr(parent, "_memmap_prefix", None) is not None:
                td._memmap_prefix = _ANONYMOUS_MEMMAP

    def _written_through(self) -> None:
        """After a write of the value: the parent it was read from holds it too."""
        link = self.__dict__.get("_parent_entry")
        if link is not None:
            parent, key = link
            value = self._tensordict._get_str("data", None)
            parent._set_str(key, value, inplace=True, validated=True)

    def update_(self, *args, **kwargs):
        super().update_(*args, **kwargs)
        self._written_through()
        return self

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._written_through()
        return self

    def set_(self, *args, **kwargs):
        super().set_(*args, **kwargs)
        self._written_through()
        return self

    def tolist(self) -> list:
        """The value repeated as nested lists shaped like the batch."""
        return _object_array(self.data, self.batch_size).tolist()

    # A NonTensorData is a leaf: it has no entries to list (as 0.15.3's), so a walk
    # over tensor collections (``for v in td.values(): ...``) ends at it.
    def keys(self, *args, **kwargs):
        """No keys: a NonTensorData is a leaf (its value is :attr:`data`).

        >>> list(NonTensorData("text").keys())
        []
        """
        return {}.keys()

    def values(self, *args, **kwargs):
        """No entries: a NonTensorData is a leaf (its value is :attr:`data`).

        >>> list(NonTensorData("text").values())
        []
        """
        return {}.values()

    def items(self, *args, **kwargs):
        """No entries: a NonTensorData is a leaf (its value is :attr:`data`).

        >>> list(NonTensorData("text").items())
        []
        """
        return {}.items()

    def __eq__(self, other):
        other_data = other.data if isinstance(other, NonTensorData) else other
        return torch.full(
            self.batch_size, _same(self.data, other_data), dtype=torch.bool
        )

    def __ne__(self, other):
        return ~self.__eq__(other)

    def __xor__(self, other):
        return self._combined(other, "xor")

    def __or__(self, other):
        return self._combined(other, "or")

    def _combined(self, other, op: str):
        """``self OP other`` with non-tensor data: the booleans of the values, one per
        element (as 0.15.3); other operands go to the tensordict op."""
        if isinstance(other, (NonTensorData, NonTensorStack)):
            result = compare_non_tensor(self, other, self.batch_size, op)
            if result is None:
                raise TypeError(
                    f"unsupported operand type(s) for {'^' if op == 'xor' else '|'}: "
                    f"{type(self.data).__name__!r} and "
                    f"{type(_raw(other)).__name__!r}"
                )
            return result
        return getattr(super(), f"__{op}__")(other)

    __hash__ = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        joined = _join_non_tensor(func, args, kwargs)
        if joined is not NotImplemented:
            return joined
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(data={self.data}, batch_size={self.batch_size!r}, "
            f"device={self.device})"
        )


@register
class MetaData(NonTensorData, shadow=True):
    """A :class:`NonTensorData` used for metadata: the same behaviour, another name.

    >>> td = TensorDict(meta=MetaData({"run": 3}, batch_size=[2]), batch_size=[2])
    >>> td[0]["meta"]
    {'run': 3}
    """


def _join_non_tensor(func, args, kwargs):
    """``torch.stack`` / ``torch.cat`` of non-tensor data only (NonTensorData and
    NonTensorStack): one value or a NonTensorStack; ``NotImplemented`` otherwise."""
    if func not in (torch.stack, torch.cat):
        return NotImplemented
    items = list(args[0] if args else kwargs["tensors"])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if not all(isinstance(i, (NonTensorData, NonTensorStack)) for i in items):
        return NotImplemented
    return _stack_or_cat(func, items, dim)


def _stack_or_cat(func, items, dim):
    sizes = [tuple(item.batch_size) for item in items]
    if func is torch.stack:
        if len(set(sizes)) != 1:
            raise RuntimeError(
                f"stack expects each item to have the same batch size, got {sizes}"
            )
        bs = sizes[0]
        result = stack_non_tensor(items, dim, bs)
        new_bs = list(bs)
        new_bs.insert(batch_dim(dim, torch.Size(bs), "stack", extra=1), len(items))
    else:
        d = batch_dim(dim, torch.Size(sizes[0]), "cat")
        result = cat_non_tensor(items, dim, sizes)
        new_bs = list(sizes[0])
        new_bs[d] = sum(s[d] for s in sizes)
    if isinstance(result, NonTensorStack):
        return result
    cls = type(items[0]) if isinstance(items[0], NonTensorData) else NonTensorData
    return cls(result, batch_size=new_bs, device=items[0].device)


def _numpy_index(index: Any) -> Any:
    """A normalised batch index, as numpy takes it (tensors become arrays)."""
    if isinstance(index, Tensor):
        return index.cpu().numpy()
    if type(index) is tuple:
        return tuple(_numpy_index(part) for part in index)
    return index


@register
class NonTensorStack(TensorDictGeneratedOps, TensorDictBase):
    """Non-tensor values, one per element of the batch (the values of a stack of
    tensordicts whose non-tensor entries differ).

    ``NonTensorStack("a", "b")`` stacks values (or NonTensorData, or NonTensorStacks
    of one batch size) along a new first dim; :meth:`from_list` builds one from nested
    lists. Indexing gives a NonTensorData for one element, or a NonTensorStack of
    the selected ones; ``.data`` is the value when every element holds the same one;
    :meth:`tolist` gives the values as nested lists, and a NonTensorStack compares
    equal to those lists.

    >>> stack = NonTensorStack("a", "b", "c")
    >>> stack.batch_size, stack[1].data, stack[1:].tolist()
    (torch.Size([3]), 'b', ['b', 'c'])
    """

    __slots__ = (
        "_values",
        "_batch_size",
        "_device",
        "_names",
        "_is_locked",
        "_last_lock_op",
        "_lock_stack",
    )

    _is_non_tensor = True

    # The non-tensor entries of stacked, cut and written tensordicts, for the layers
    # below this module, which reach them through container_class("NonTensorStack").
    _stack_values = staticmethod(stack_non_tensor)
    _stack_entries = staticmethod(stack_non_tensor_entries)
    _split_entries = staticmethod(split_non_tensor_entries)
    _write_at = staticmethod(write_non_tensor_at)
    _compare_values = staticmethod(compare_non_tensor)

    def __init__(
        self, *items: Any, batch_size=None, device=None, names=None, stack_dim: int = 0
    ) -> None:
        if not items:
            values = np.empty((0,), dtype=object)
        else:
            sizes = {
                tuple(item.batch_size)
                for item in items
                if isinstance(item, (NonTensorStack, NonTensorData))
            }
            if len(sizes) > 1:
                raise ValueError(
                    f"NonTensorStack: the items have different batch sizes {sorted(sizes)}"
                )
            bs = sizes.pop() if sizes else ()
            arrays = [_as_array(item, bs) for item in items]
            values = np.stack(arrays, axis=stack_dim)
        if batch_size is not None:
            bs = tuple(_parse_batch_size(batch_size))
            if bs != values.shape:
                raise ValueError(
                    f"NonTensorStack: batch_size {list(bs)} does not match the "
                    f"{list(values.shape)} values given"
                )
        self._init(values, _parse_device(device), names)

    def _init(self, values: np.ndarray, device, names) -> None:
        self._values = values
        self._batch_size = torch.Size(values.shape)
        self._device = device
        self._names = None if names is None else _parse_names(names, values.ndim)
        self._is_locked = False
        self._last_lock_op = None
        self._lock_stack = None

    @classmethod
    def _from_array(
        cls, values: np.ndarray, device=None, names=None
    ) -> "NonTensorStack":
        self = object.__new__(cls)
        self._init(values, device, names)
        return self

    @classmethod
    def from_list(cls, values: list, *, device=None, names=None) -> "NonTensorStack":
        """A stack from (nested) lists of values: each list level is a batch dim."""
        items = [cls.from_list(v) if isinstance(v, list) else v for v in values]
        return cls(*items, device=device, names=names)

    @classmethod
    def from_nontensordata(cls, non_tensor: NonTensorData) -> "NonTensorStack":
        """The stack of a NonTensorData's value over its batch: one value seen
        through a read-only broadcast view (shape ops that give a non-tensor value a
        batch, e.g. ``unsqueeze``, cost nothing per element; the first write copies,
        see :meth:`_set_at_index`).

        >>> s = NonTensorStack.from_nontensordata(NonTensorData("cat", batch_size=[2]))
        >>> s.tolist()
        ['cat', 'cat']
        """
        values = np.broadcast_to(
            _object_array(non_tensor.data), tuple(non_tensor.batch_size)
        )
        return cls._from_array(values, non_tensor.device)

    def tolist(self) -> list:
        """The values, as nested lists shaped like the batch."""
        return self._values.tolist()

    @property
    def data(self) -> Any:
        """The value every element holds (as on a NonTensorData); an AttributeError
        when the elements differ, since no one value stands for them (read
        :meth:`tolist`)."""
        values = self._values
        if values.size and not any(values.strides):  # one value, broadcast
            return values.flat[0]
        flat = values.reshape(-1)
        if flat.size and all(_same(flat[0], v) for v in flat[1:]):
            return flat[0]
        raise AttributeError(
            f"the elements of this NonTensorStack (batch size {list(self._batch_size)}) "
            f"do not all hold the same value, so it has no single .data: read "
            f".tolist() instead"
        )

    def to_dict(self, **kwargs) -> list:
        return self.tolist()

    def _entry_for(self, key, batch_size, device) -> "NonTensorStack":
        """What a tensordict stores when this is written at ``key``: the stack itself,
        whose batch size must start with the tensordict's."""
        if self._batch_size[: len(batch_size)] != batch_size:
            raise _errors.batch_mismatch(key, self._batch_size, batch_size)
        if device is not None and self._device != device:
            return self._moved_to(device)
        return self

    # ------------------------------------------------------------------ attributes
    @property
    def batch_size(self) -> torch.Size:
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        shape = tuple(_parse_batch_size(value))
        values = _fit(self._values, shape)
        if not isinstance(values, np.ndarray):
            raise RuntimeError(
                f"cannot set the batch_size of a NonTensorStack of batch_size "
                f"{list(self._batch_size)} to {list(shape)}"
            )
        self._values = values
        self._batch_size = torch.Size(self._values.shape)
        self._names = None

    # ------------------------------------------------------------------ primitives
    def _own_items(self):
        return ()

    def _own_keys(self):
        return ()

    def _own_values(self):
        return ()

    def _get_str(self, key, default, *, missing_ok=False):
        if default is NO_DEFAULT and not missing_ok:
            raise KeyError(
                f"key {key!r} not found: a NonTensorStack holds values, not keys"
            )
        return default

    def _set_str(self, key, value, *, inplace, validated, non_blocking=False):
        raise TypeError(f"cannot set the key {key!r}: a NonTensorStack holds no keys")

    def _del_str(self, key):
        raise KeyError(
            f"key {key!r} not found: a NonTensorStack holds values, not keys"
        )

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        # A stack has no entries to leave out: "empty" keeps its values, fitted to
        # ``batch_size`` (what a walk that rebuilds every level with a new batch size,
        # e.g. a reduction, expects of a nested container).
        _, rebuild = self._leaves_and_rebuild()
        return rebuild([], batch_size=batch_size, device=device, names=names)

    def __getitem__(self, index):
        if type(index) is str or (
            type(index) is tuple and index and _looks_like_key(index)
        ):
            raise KeyError(
                f"key {index!r} not found: a NonTensorStack holds values, not keys"
            )
        # As in 0.15.3: one element is a NonTensorData, several a NonTensorStack
        # (even when they hold one value). Tensordicts holding a stack index it
        # with _index, which keeps one value for equal elements.
        bs = self._batch_size
        idx = _normalize_index(index, bs)
        shape = _indexed_batch_shape(bs, idx)
        result = self._values[_numpy_index(idx)]
        if not shape:
            if isinstance(result, np.ndarray) and result.dtype == object:
                result = result[()]
            return NonTensorData(result, batch_size=[], device=self._device)
        values = np.asarray(result).reshape(tuple(shape))
        return NonTensorStack._from_array(values, self._device)

    def _index(self, index):
        bs = self._batch_size
        idx = _normalize_index(index, bs)
        shape = _indexed_batch_shape(bs, idx)
        result = self._values[_numpy_index(idx)]
        if not shape:
            if (
                isinstance(result, np.ndarray)
                and result.dtype == object
                and result.shape == ()
            ):
                result = result[()]
            return result
        values = np.asarray(result).reshape(tuple(shape))
        flat = values.reshape(-1)
        if _all_same(flat):
            return flat[0]  # the selected elements hold one value: that value
        return NonTensorStack._from_array(values, self._device)

    def _set_at_index(self, index, value) -> None:
        idx = _normalize_index(index, self._batch_size)
        shape = _indexed_batch_shape(self._batch_size, idx)
        idx = _numpy_index(idx)
        if not self._values.flags.writeable:  # a broadcast view of one value
            self._values = self._values.copy()
        if isinstance(value, NonTensorStack):
            self._values[idx] = value._values
        elif not shape:  # one element: the value itself (a list value stays one)
            self._values[idx] = _raw(value)
        elif type(value) is list and len(value) == shape[0]:
            # one value per element (0.15.3): stack[:2] = ["x", "y"]
            self._values[idx] = _elementwise(value, tuple(shape))
        else:
            self._values[idx] = _object_array(_raw(value), tuple(shape))

    def _leaves(self) -> list:
        return []

    def _leaves_and_rebuild(self):
        def rebuild(
            new_leaves,
            *,
            batch_size=None,
            device=NO_DEFAULT,
            names=NO_DEFAULT,
            leaf_fn=None,
            stack_non_tensor=False,  # (a TensorDict's option: nothing to do here)
        ):
            values = self._values.copy()
            if leaf_fn is not None and values.ndim:
                # the values move as the tensors did: run the same per-leaf op on
                # the positions of the elements, then gather the values
                positions = torch.arange(values.size).reshape(values.shape)
                taken = leaf_fn(positions).numpy()
                # (flat indices, so that a 0-dim result stays an array: indexing
                # with a 0-dim index array would give the bare element)
                values = values.reshape(-1)[taken.reshape(-1)].reshape(taken.shape)
            elif batch_size is not None:
                values = _fit(values, tuple(_parse_batch_size(batch_size)))
                if not isinstance(values, np.ndarray):
                    return values  # the values do not fit the new batch: kept as data
            device = self._device if device is NO_DEFAULT else _parse_device(device)
            if values.ndim == 0:  # one element left: it is one value, as 0.15.3 has it
                return NonTensorData(data=values[()], batch_size=[], device=device)
            out = NonTensorStack._from_array(values, device)
            if names is NO_DEFAULT and batch_size is None:
                out._names = self._names
            elif names is not NO_DEFAULT:
                out._names = _parse_names(names, values.ndim)
            return out

        return [], rebuild

    def _operand_leaves(self, other, op, default=None) -> list:
        return []

    def _moved_to(self, device):
        return NonTensorStack._from_array(
            self._values, _parse_device(device), self._names
        )

    def _set_lock(self, locked: bool) -> None:
        self._is_locked = locked

    def _apply(self, fn, others, **kwargs):
        if kwargs.get("inplace"):
            return self
        return self.copy()

    def _replace_contents(self, other) -> None:
        self._values = other._values

    def densify(self, layout: torch.layout = torch.strided) -> "NonTensorStack":
        return self

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A NonTensorStack is its own contiguous form (as in 0.15.3): itself."""
        return self

    def where(self, condition, other, *, out=None, pad=None, update_batch_size=False):
        """Element by element, this stack's value where ``condition`` holds and
        ``other``'s elsewhere (``other`` a NonTensorStack, a NonTensorData or a
        value); written into ``out`` (a NonTensorStack) when given, which is
        returned. ``pad`` and ``update_batch_size`` change nothing here."""
        shape = tuple(self._batch_size)
        cond = np.broadcast_to(torch.as_tensor(condition).cpu().numpy() != 0, shape)
        values = np.empty(shape, dtype=object)
        values[...] = _as_array(other, shape)
        values[cond] = _as_array(self, shape)[cond]
        if out is None:
            return NonTensorStack._from_array(values, self._device)
        if not isinstance(out, NonTensorStack) or tuple(out.batch_size) != shape:
            raise ValueError(
                f"where(out=...): out must be a NonTensorStack of batch size "
                f"{list(shape)}, got {type(out).__name__}"
            )
        out._values = values
        return out

    def unbind(self, dim: int = 0) -> tuple:
        """The values along batch dim ``dim``, one entry per index."""
        n = len(self._batch_size)
        if not -n <= dim < n:
            raise IndexError(f"unbind: dim {dim} is out of range for {n} batch dims")
        dim %= n
        return tuple(
            self[(slice(None),) * dim + (i,)] for i in range(self._batch_size[dim])
        )

    # ------------------------------------------------------------------ comparisons
    def __eq__(self, other):
        if isinstance(other, NonTensorStack):
            # element by element, a bool tensor of the batch size (as 0.15.3:
            # TorchRL's Choice spec calls ``(choice == value).all()``)
            if other._batch_size != self._batch_size:
                raise RuntimeError(
                    f"cannot compare non-tensor stacks of batch sizes "
                    f"{tuple(self._batch_size)} and {tuple(other._batch_size)}"
                )
            mine, theirs = self._values.reshape(-1), other._values.reshape(-1)
            same = [_same(a, b) for a, b in zip(mine, theirs)]
            return torch.tensor(same, dtype=torch.bool).reshape(self._batch_size)
        if isinstance(other, list):
            return self.tolist() == other
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        joined = _join_non_tensor(func, args, kwargs)
        if joined is not NotImplemented:
            return joined
        return _torch_function.dispatch(func, types, args, kwargs)

    def __repr__(self) -> str:
        parts = [
            repr(self.tolist()),
            f"batch_size={self._batch_size!r}",
            f"device={self._device}",
        ]
        return "NonTensorStack(\n" + ",\n".join(_indent(p, 1) for p in parts) + ")"


def _elementwise(values: list, shape: tuple) -> np.ndarray:
    """An object array of ``shape`` from a list with one item per element of its first
    dim (nested lists of the next dims' lengths spread the same way)."""
    out = np.empty(shape, dtype=object)
    for i, item in enumerate(values):
        if len(shape) > 1 and type(item) is list and len(item) == shape[1]:
            out[i] = _elementwise(item, shape[1:])
        elif len(shape) > 1:
            out[i] = _object_array(_raw(item), shape[1:])
        else:
            out[i] = _raw(item)
    return out


def _fit(values: np.ndarray, shape: tuple) -> Any:
    """``values`` reshaped (same number of elements) or broadcast to ``shape``; when
    neither fits (a batch dim reduced away), the one value they all hold, or else the
    values as a flat list."""
    if values.shape == shape:
        return values
    if values.size == int(np.prod(shape, dtype=np.int64)):
        return values.reshape(shape)
    try:
        return np.broadcast_to(values, shape).copy()
    except ValueError:
        flat = values.reshape(-1).tolist()
        if _all_same(flat):
            return _object_array(flat[0], shape)
        return flat


# ----------------------------------------------------------------------------- 0.15.3's
# smaller public classes (issue 29)


class _NonTensorDataBaseMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, NonTensorData)

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or (isinstance(sub, type) and issubclass(sub, NonTensorData))

    def __call__(cls, *args, **kwargs):
        return NonTensorData(*args, **kwargs)


class NonTensorDataBase(metaclass=_NonTensorDataBaseMeta):
    """The base of the entries that hold one Python object instead of a tensor:
    :class:`NonTensorData` (one value per batch element) and :class:`MetaData` (one
    value for the whole batch) are its subclasses for ``isinstance``/``issubclass``,
    and calling it builds a :class:`NonTensorData`. Here ``MetaData`` derives from
    ``NonTensorData``, so this base is virtual (see ``docs/compatibility.md``).

    >>> isinstance(NonTensorData("x"), NonTensorDataBase), issubclass(MetaData, NonTensorDataBase)
    (True, True)
    """


@register
class TensorAttrs(TensorClass):
    """The device, dtype and shape of one tensor: what :meth:`TensorDictBase.attrs`
    records per leaf. The fields start with ``tgt_`` so that they do not hide the
    tensorclass's own ``device`` and ``shape``.

    >>> TensorAttrs(tgt_dtype=torch.int32, batch_size=[]).tgt_dtype
    torch.int32
    """

    tgt_device: Any = None
    tgt_dtype: Any = None
    tgt_shape: Any = None
