"""What the spec-driven tests share: the loaded spec, the calls each entry declares
(``tests:`` in ``spec/*.yaml``) turned into arguments, and oracles that come from torch,
not from the entry (the torch function or tensor method of the op's name).

A call is Python call arguments (``"2, dim=0"``) over the names ``torch``,
``TensorDict``, ``other`` (a tensordict shaped like the input), ``batch_size`` (the
input's) and ``nested_key`` (the key of the input's first nested tensordict, ``"a"``
when it has none); ``codegen`` checks that a call uses no other name.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.loader import load_spec  # noqa: E402
from codegen.model import Op, signature_text  # noqa: E402
from tensordict import TensorDict, TensorDictBase  # noqa: E402
from tensordict.base import NO_DEFAULT  # noqa: E402
from tensordict.utils import expand_right  # noqa: E402

SPEC = load_spec(ROOT / "spec")


def ops_of(family: str) -> list[Op]:
    return [op for op in SPEC.ops() if op.family == family]


def A(*args: Any, **kwargs: Any) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of a call, as written."""
    return args, kwargs


def nested_key_of(td: Any) -> Any:
    for key, value in td.items():
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            return key
    return "a"


def arguments(text: str, td: Any = None, other: Any = None) -> tuple[tuple, dict]:
    """The ``(args, kwargs)`` a test call ``text`` stands for, on the input ``td``."""
    env = {
        "torch": torch,
        "TensorDict": TensorDict,
        "other": other,
        "batch_size": tuple(td.batch_size) if td is not None else (),
        "nested_key": nested_key_of(td) if td is not None else "a",
        "_A": A,
    }
    return eval(f"_A({text})", env)


def calls(op: Op, td: Any = None, other: Any = None) -> list[tuple[tuple, dict]]:
    return [arguments(call.args, td, other) for call in op.tests.calls]


def batch_size(op: Op, default: tuple) -> tuple:
    """The batch size an entry's tests use (``tests: batch_size``)."""
    return op.tests.batch_size if op.tests.batch_size is not None else default


def is_under(leaf_key: Any, key: Any) -> bool:
    """Whether the nested key ``leaf_key`` lies under ``key`` (or is it)."""
    path = leaf_key if isinstance(leaf_key, tuple) else (leaf_key,)
    prefix = key if isinstance(key, tuple) else (key,)
    return path[: len(prefix)] == prefix


def binder(op: Op) -> Callable[..., dict]:
    """``bind(*args, **kwargs)``: the op's parameters by name (defaults filled in), as
    its signature binds a call."""
    params = tuple(dataclasses.replace(p, annotation=None) for p in op.signature.params)
    text = signature_text(params, None, "")[1:-1]
    return eval(f"lambda {text}: dict(locals())", {"torch": torch, "NO_DEFAULT": NO_DEFAULT})


def oracle(op: Op, **context: Any) -> Callable | None:
    """``fn(x, *args, **kwargs)``: what torch gives for one tensor ``x`` called with
    the op's arguments. The entry's ``tests: oracle`` where it has one (an expression
    over ``x``, the op's parameters, ``context`` (``td``, ``leaf_key``, ``leaves``) and
    ``ORACLE_NAMES``), else torch's function or tensor method of the op's name."""
    if op.tests.oracle is None:
        return torch_oracle(op.name)
    code = compile(op.tests.oracle, f"{op.location}: {op.name}: tests: oracle", "eval")
    bind = binder(op)
    names = {
        "torch": torch,
        "expand_right": expand_right,
        "is_under": is_under,
        "NO_DEFAULT": NO_DEFAULT,
        "TensorDictBase": TensorDictBase,
        "td": None,
        "leaf_key": None,
        "leaves": None,
        **context,
    }

    def fn(x: Any, *args: Any, **kwargs: Any) -> Any:
        return eval(code, {**names, **bind(*args, **kwargs), "x": x})

    return fn


def torch_oracle(name: str) -> Callable | None:
    """What torch does to one tensor for the op ``name``: ``torch.<name>(x, ...)`` (a
    dtype: ``x.to(torch.<name>)``), or the tensor method ``x.<name>(...)``; None when
    torch has neither."""
    fn = None if name.startswith("__") else getattr(torch, name, None)
    if isinstance(fn, torch.dtype):  # a cast: float32, int8...
        return lambda x: x.to(fn)
    if callable(fn) and not isinstance(fn, type):
        return fn
    if hasattr(torch.Tensor, name):
        return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)
    return None
