"""The ``repr`` of tensordicts, and the print options that shape it.

By default, the verbose form the seed documents print: one field per line (sorted by
key, as the seeds print them), with each tensor's shape, device, dtype and sharing,
then the container's batch size and device.

    TensorDict(
        fields={
            a: Tensor(shape=torch.Size([10, 3]), device=cpu, dtype=torch.float32, is_shared=False)},
        batch_size=torch.Size([10]),
        device=None,
        is_shared=False)

``set_printoptions(compact=True)`` gives the one-line form of 0.15.3's default
(``TensorDict(batch_size=[10], fields={a: f32[3]})``); the other options (what the
verbose form shows, key order) are those of 0.15.3's ``set_printoptions``.
"""

from __future__ import annotations

import functools

import torch
from torch.nn.parameter import is_lazy
from torch import Tensor

from tensordict._registry import container_class

_INDENT = "    "


def _indent(text: str, levels: int) -> str:
    """Indent every line of ``text`` by ``levels`` steps."""
    pad = _INDENT * levels
    return pad + text.replace("\n", "\n" + pad)


def tensor_shape(tensor: Tensor) -> torch.Size:
    """``tensor.shape``, also for ``torch.nested`` tensors: ``-1`` for a ragged dim
    (and ``[-1]`` for an uninitialized parameter, whose shape is not known yet)."""
    if is_lazy(tensor):
        return torch.Size([-1])
    if not tensor.is_nested:
        return tensor.shape
    if tensor.layout is torch.strided:
        sizes = tensor._nested_tensor_size()
        if sizes.numel() == 0:
            return torch.Size([tensor.size(0)])
        first = sizes[0]
        ragged = (sizes != first).any(0).tolist()
        dims = [-1 if r else int(d) for r, d in zip(ragged, first.tolist())]
        return torch.Size([tensor.size(0), *dims])
    return torch.Size([d if isinstance(d, int) else -1 for d in tensor.shape])


# --------------------------------------------------------------------- print options

_DEFAULTS = {
    "show_batch_size": True,
    "show_device": True,
    "show_is_shared": True,
    "show_shape": True,
    "show_field_device": True,
    "show_dtype": True,
    "show_field_is_shared": True,
    "show_grad": False,
    "show_is_contiguous": False,
    "show_is_view": False,
    "show_storage_size": False,
    "plain": False,
    "sort_keys": "alphabetical",
    "compact": False,  # the seeds' verbose form (0.15.3 defaults to compact)
    "html": True,
}
# options only the verbose form uses: passing one turns compact off unless compact is
# passed too
_VERBOSE_ONLY = (
    "show_is_shared",
    "show_shape",
    "show_field_device",
    "show_field_is_shared",
    "show_grad",
    "show_is_contiguous",
    "show_is_view",
    "show_storage_size",
    "plain",
)
_HIDDEN_BY_NOT_VERBOSE = (
    "show_device",
    "show_field_device",
    "show_dtype",
    "show_is_shared",
    "show_field_is_shared",
)
_SORT_KEYS = ("alphabetical", "insertion")
_options = dict(_DEFAULTS)


def get_printoptions() -> dict:
    """The current print options (a copy).

    >>> isinstance(get_printoptions(), dict)
    True
    """
    return dict(_options)


class set_printoptions:
    """Change what the ``repr`` of a tensordict shows: for a ``with`` block, for a
    decorated function, or (``set_printoptions(...).set()``) from now on. Options not
    passed keep their current value; ``verbose=False`` hides devices, dtypes and
    ``is_shared`` unless an option passed says otherwise. Unknown options raise
    ``TypeError``. See docs/ecosystem.md, "Print options".

    >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
    >>> with set_printoptions(verbose=False):
    ...     short = repr(td)
    >>> len(short) < len(repr(td))
    True
    """

    def __init__(self, *, verbose: bool = True, **options) -> None:
        unknown = set(options) - set(_DEFAULTS)
        if unknown:
            raise TypeError(
                f"Unknown printoptions {sorted(unknown)} passed to set_printoptions; "
                f"the options are {sorted(_DEFAULTS)} and verbose"
            )
        sort_keys = options.get("sort_keys", "alphabetical")
        if isinstance(sort_keys, bool):  # True: alphabetical, False: insertion
            sort_keys = options["sort_keys"] = _SORT_KEYS[not sort_keys]
        if not callable(sort_keys) and sort_keys not in _SORT_KEYS:
            raise ValueError(
                f"set_printoptions: sort_keys must be one of {_SORT_KEYS} or a "
                f"function of the key (used as sorted()'s key), got {sort_keys!r}"
            )
        changes = dict(options)
        if not verbose:
            for name in _HIDDEN_BY_NOT_VERBOSE:
                changes.setdefault(name, False)
        if "compact" not in options and any(n in options for n in _VERBOSE_ONLY):
            changes["compact"] = False
        self._changes = changes
        self._saved: list[dict] = []

    def set(self) -> None:
        """Apply the options from now on (until ``__exit__``, which restores the
        options this call replaced)."""
        self._saved.append(dict(_options))
        _options.update(self._changes)

    def __enter__(self) -> "set_printoptions":
        self.set()
        return self

    def __exit__(self, *exc) -> None:
        if not self._saved:  # never applied: nothing to restore
            return
        previous = self._saved.pop()
        _options.clear()
        _options.update(previous)

    def __call__(self, func):
        @functools.wraps(func)
        def with_options(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return with_options


def printoptions() -> dict:
    """The live options (read-only by convention), for the repr functions."""
    return _options


def sorted_items(items) -> list:
    """Entries in the order ``sort_keys`` asks for."""
    sort_keys = _options["sort_keys"]
    if sort_keys == "insertion":
        return list(items)
    if callable(sort_keys):
        return sorted(items, key=lambda item: sort_keys(item[0]))
    return sorted(items, key=lambda item: item[0])


# --------------------------------------------------------------------- verbose form


def tensor_repr(tensor: Tensor) -> str:
    name = (
        "Tensor"
        if type(tensor) is Tensor or tensor.is_nested
        else type(tensor).__name__
    )
    return f"{name}({', '.join(tensor_attributes(tensor, tensor_shape(tensor)))})"


def _plain_stats(tensor: Tensor) -> str | None:
    if tensor.is_nested or not tensor.numel():
        return None
    values = tensor.detach().double()
    std = values.std().item() if values.numel() > 1 else 0.0
    return f"mean={values.mean().item():.4g}, std={std:.4g}"


# option -> what it shows of a tensor, in the order 0.15.3 prints them (``shape`` and
# ``shared`` are given for the stacked tensor of a lazy stack); None shows nothing
_TENSOR_ATTRIBUTES = (
    ("show_shape", lambda t, shape, shared: f"shape={shape!r}"),
    ("show_field_device", lambda t, shape, shared: f"device={t.device}"),
    ("show_dtype", lambda t, shape, shared: f"dtype={t.dtype}"),
    ("show_field_is_shared", lambda t, shape, shared: f"is_shared={shared}"),
    ("show_grad", lambda t, shape, shared: f"requires_grad={t.requires_grad}"),
    (
        "show_is_contiguous",
        lambda t, shape, shared: f"is_contiguous={t.is_contiguous()}",
    ),
    ("show_is_view", lambda t, shape, shared: f"is_view={t._base is not None}"),
    (
        "show_storage_size",
        lambda t, shape, shared: (
            None if t.is_nested else f"storage_size={t.untyped_storage().nbytes()}"
        ),
    ),
    ("plain", lambda t, shape, shared: _plain_stats(t)),
)


def tensor_attributes(tensor: Tensor, shape, shared=None) -> list[str]:
    """``shape=..., device=..., ...``: what the options show of a tensor."""
    if shared is None and _options["show_field_is_shared"]:
        shared = False if is_lazy(tensor) else tensor.is_shared()
    parts = []
    for option, show in _TENSOR_ATTRIBUTES:
        if _options[option]:
            text = show(tensor, shape, shared)
            if text is not None:
                parts.append(text)
    return parts


def trailer_parts(td, shared=None) -> list[str]:
    """The ``batch_size=...``, ``device=...``, ``is_shared=...`` lines the options
    show."""
    parts = []
    if _options["show_batch_size"]:
        parts.append(f"batch_size={td.batch_size!r}")
    if _options["show_device"]:
        parts.append(f"device={td.device}")
    if _options["show_is_shared"]:
        parts.append(f"is_shared={td.is_shared() if shared is None else shared}")
    return parts


def non_tensor_repr(value, container) -> str:
    return (
        f"NonTensorData(data={value}, batch_size={container.batch_size!r}, "
        f"device={container.device})"
    )


def entry_repr(value, container) -> str:
    if isinstance(value, Tensor):
        return tensor_repr(value)
    if isinstance(value, container_class("TensorDictBase")):
        return repr(value)
    return non_tensor_repr(value, container)


def fields_repr(items, container) -> str:
    """The ``fields={...}`` block, unindented."""
    lines = [f"{key}: {entry_repr(value, container)}" for key, value in items]
    if not lines:
        return "fields={\n}"
    return "fields={\n" + ",\n".join(_indent(line, 1) for line in lines) + "}"


def container_repr(td) -> str:
    if _options["compact"]:
        return compact_repr(td)
    parts = [fields_repr(sorted_items(td.items()), td), *trailer_parts(td)]
    return f"{type(td).__name__}(\n" + ",\n".join(_indent(p, 1) for p in parts) + ")"


# --------------------------------------------------------------------- compact form

_WIDTH = 88  # a compact repr longer than this puts one field per line
_DTYPE_ABBREVIATIONS = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.bool: "bool",
    torch.complex64: "c64",
    torch.complex128: "c128",
}


def _dtype_abbreviation(dtype: torch.dtype) -> str:
    return _DTYPE_ABBREVIATIONS.get(dtype) or str(dtype).removeprefix("torch.")


def _compact_fields(td) -> list[str]:
    """``key: f32[3]`` per entry: the dtype and the dims after the batch dims; a
    nested tensordict as ``{...}`` (a tensorclass as ``Name{...}``), non-tensor data
    as the type of its value."""
    nested_base = container_class("TensorDictBase")
    batch_dims = td.batch_dims
    out = []
    for key, value in sorted_items(_compact_items(td)):
        if isinstance(value, Tensor):
            dims = ",".join(str(d) for d in tensor_shape(value)[batch_dims:])
            dtype = _dtype_abbreviation(value.dtype) if _options["show_dtype"] else ""
            text = f"{dtype}[{dims}]"
        elif (
            getattr(type(value), "_is_tensorclass", False) and not value._is_non_tensor
        ):
            text = f"{type(value).__name__}{{{', '.join(_compact_fields(value))}}}"
        elif isinstance(value, nested_base) and not value._is_non_tensor:
            text = f"{{{', '.join(_compact_fields(value))}}}"
        else:  # non-tensor data: the type of the value (or NonTensorStack)
            text = type(value).__name__
        out.append(f"{key}: {text}")
    return out


def _compact_items(td):
    if getattr(type(td), "_is_tensorclass", False):
        items = dict(td._tensordict._own_items())
        for name in type(td)._tc_fields:
            items.setdefault(name, None)
        return items.items()
    if hasattr(td, "tensordicts"):  # a lazy stack: the keys every member has
        return [(key, td._get_str(key, None)) for key in td._own_keys()]
    return td._own_items()


def compact_repr(td) -> str:
    """``Name(batch_size=[3], device=cpu, fields={a: f32[], b: {c: i64[]}})``; one
    field per line when that is longer than 88 characters."""
    head = []
    if _options["show_batch_size"]:
        head.append(f"batch_size={list(td.batch_size)}".replace(" ", ""))
    if _options["show_device"] and td.device is not None:
        head.append(f"device={td.device}")
    if hasattr(td, "tensordicts"):
        head.append(f"stack_dim={td.stack_dim}")
    fields = _compact_fields(td)
    name = type(td).__name__
    line = f"{name}({''.join(h + ', ' for h in head)}fields={{{', '.join(fields)}}})"
    if len(line) <= _WIDTH or not fields:
        return line
    body = ",\n".join(_indent(f, 1) for f in fields)
    return f"{name}({''.join(h + ', ' for h in head)}fields={{\n{body}}})"
