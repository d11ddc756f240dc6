"""``parse_tensor_dict_string``: a tensordict rebuilt (zeros) from its printed form.

It reads both forms ``repr`` prints: the verbose one (``fields={...}``,
``batch_size=torch.Size([...])``, ``Tensor(shape=..., dtype=...)``) and the compact one
(``set_printoptions(compact=True)``: ``TensorDict(batch_size=[3], fields={obs:
f32[4], next: {done: bool[1]}})``, leaf shapes after the batch dims). The text is read
by a small recursive-descent parser into calls, lists, dicts and atoms; nothing is
evaluated.
"""

from __future__ import annotations

import torch

from tensordict._registry import container_class

__all__ = ["parse_tensor_dict_string"]

_ABBREVIATIONS = {"bool": torch.bool, "bf16": torch.bfloat16}
for _dtype in vars(torch).values():
    if isinstance(_dtype, torch.dtype) and _dtype not in (torch.bool, torch.bfloat16):
        _bits = _dtype.itemsize * 8
        if _dtype.is_complex:
            _ABBREVIATIONS.setdefault(f"c{_bits}", _dtype)
        elif _dtype.is_floating_point and str(_dtype) in (
            "torch.float16",
            "torch.float32",
            "torch.float64",
        ):
            _ABBREVIATIONS.setdefault(f"f{_bits}", _dtype)
        elif str(_dtype).startswith("torch.int") and not _dtype.is_floating_point:
            _ABBREVIATIONS.setdefault(f"i{_bits}", _dtype)
        elif str(_dtype).startswith("torch.uint"):
            _ABBREVIATIONS.setdefault(f"u{_bits}", _dtype)

_DTYPES = {str(d): d for d in vars(torch).values() if isinstance(d, torch.dtype)}


class _Call:
    def __init__(self, name, kwargs):
        self.name, self.kwargs = name, kwargs


class _Leaf:  # the compact form of a tensor: f32[4]
    def __init__(self, abbreviation, shape):
        self.abbreviation, self.shape = abbreviation, shape


class _Parser:
    def __init__(self, text: str):
        self.text, self.i = text, 0

    def error(self, what: str):
        near = self.text[max(0, self.i - 20) : self.i + 20]
        return ValueError(
            f"parse_tensor_dict_string: {what} at position {self.i} (near {near!r}); "
            f"it reads the repr of a TensorDict"
        )

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.i] if self.i < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.error(f"expected {char!r}")
        self.i += 1

    def atom(self) -> str:
        self.skip()
        start = depth = 0
        start = self.i
        while self.i < len(self.text):
            char = self.text[self.i]
            if char in "([{":
                if char == "(" or depth:
                    depth += 1
                else:
                    break
            elif char in ")]}":
                if not depth:
                    break
                depth -= 1
            elif char in ",:=" and not depth:
                break
            self.i += 1
        return self.text[start : self.i].strip()

    def value(self):
        char = self.peek()
        if char == "{":
            return self.mapping()
        if char == "[":
            return self.sequence()
        start = self.i
        name = self.name()
        if name and self.peek() == "(":
            return self.call(name)
        if name and self.peek() == "[":  # compact leaf: f32[4]
            return _Leaf(name, self.sequence())
        self.i = start
        return self.atom()

    def name(self) -> str:
        self.skip()
        start = self.i
        while self.i < len(self.text) and (
            self.text[self.i].isalnum() or self.text[self.i] in "_."
        ):
            self.i += 1
        return self.text[start : self.i]

    def call(self, name):
        self.expect("(")
        kwargs = {}
        args = []
        while self.peek() != ")":
            start = self.i
            key = self.name()
            if key and self.peek() == "=":
                self.i += 1
                kwargs[key] = self.value()
            else:
                self.i = start
                args.append(self.value())
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != ")":
                raise self.error("expected ',' or ')'")
        self.i += 1
        kwargs["*"] = args
        return _Call(name, kwargs)

    def sequence(self):
        self.expect("[")
        items = []
        while self.peek() != "]":
            items.append(self.value())
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                raise self.error("expected ',' or ']'")
        self.i += 1
        return items

    def mapping(self):
        self.expect("{")
        items = {}
        while self.peek() != "}":
            key = self.atom()
            self.expect(":")
            start = self.i
            items[key] = (self.value(), self.text[start : self.i].strip())
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "}":
                raise self.error("expected ',' or '}'")
        self.i += 1
        return items


def _size(value) -> torch.Size:
    if isinstance(value, _Call) and value.name in ("torch.Size", "Size"):
        value = value.kwargs["*"][0] if value.kwargs["*"] else []
    if not isinstance(value, list):
        raise ValueError(f"parse_tensor_dict_string: {value!r} is not a size")
    return torch.Size(int(v) for v in value)


def _device(value):
    if value in (None, "None", ""):
        return None
    if isinstance(value, _Call):  # device(type='cpu')
        text = value.kwargs.get("type", "cpu").strip("'\"")
        index = value.kwargs.get("index")
        return torch.device(text if index is None else f"{text}:{index}")
    return torch.device(value)


def _build(call: _Call, batch=None, device=None):
    if call.name == "LazyStackedTensorDict" and call.kwargs.get("exclusive_fields"):
        raise ValueError(
            "parse_tensor_dict_string cannot rebuild a lazy stack with exclusive keys "
            "(its repr does not say which member holds them)"
        )
    if call.name not in ("TensorDict", "LazyStackedTensorDict"):
        raise ValueError(
            f"parse_tensor_dict_string: {call.name}(...) is not a TensorDict"
        )
    if "batch_size" in call.kwargs:
        batch = _size(call.kwargs["batch_size"])
    device = _device(call.kwargs["device"]) if "device" in call.kwargs else device
    fields = call.kwargs.get("fields", {})
    out = container_class("TensorDict")({}, batch_size=batch or [], device=device)
    for key, (value, text) in fields.items():
        out.set(key, _entry(key, value, text, out.batch_size, device))
    return out


def _entry(key, value, text, batch, device):
    if isinstance(value, _Leaf):  # compact: the shape after the batch dims
        dtype = _ABBREVIATIONS.get(value.abbreviation)
        if dtype is None:
            raise ValueError(f"Cannot parse the field '{key}: {text}': unknown dtype")
        return torch.zeros(batch + _size(value.shape), dtype=dtype, device=device)
    if isinstance(value, dict):  # compact: a nested tensordict of the same batch size
        return _build(_Call("TensorDict", {"fields": value}), batch, device)
    if isinstance(value, _Call) and value.name in ("Tensor", "MemoryMappedTensor"):
        dtype = _DTYPES.get(value.kwargs.get("dtype"))
        if dtype is None:
            raise ValueError(f"Cannot parse the field '{key}: {text}': unknown dtype")
        leaf_device = _device(value.kwargs.get("device"))
        return torch.zeros(
            _size(value.kwargs.get("shape", [])), dtype=dtype, device=leaf_device
        )
    if isinstance(value, _Call) and value.name in (
        "TensorDict",
        "LazyStackedTensorDict",
    ):
        return _build(value, batch, device)
    raise ValueError(
        f"Cannot parse the field '{key}: {text}': parse_tensor_dict_string reads "
        f"Tensor and TensorDict fields printed with the default print options."
    )


def parse_tensor_dict_string(s: str):
    """A :class:`~tensordict.TensorDict` with the keys, shapes, dtypes, devices and
    batch sizes of the printed tensordict ``s`` (verbose or compact repr); every
    tensor is zeros, as the repr holds no values. Non-tensor fields and lazy stacks
    with exclusive keys raise ``ValueError``.

    >>> td = TensorDict(obs=torch.ones(3, 4), batch_size=[3])
    >>> back = parse_tensor_dict_string(repr(td))
    >>> back["obs"].shape, back.batch_size
    (torch.Size([3, 4]), torch.Size([3]))
    """
    parser = _Parser(s)
    value = parser.value()
    if not isinstance(value, _Call):
        raise parser.error("no TensorDict(...) found")
    return _build(value)
