"""CudaGraphModule: replay a module's CUDA work from a captured CUDA graph.

On a machine without CUDA it cannot capture anything: it says so once (a warning at
construction) and calls the module as it is.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch
from torch import Tensor

from tensordict.base import TensorDictBase

__all__ = ["CudaGraphModule"]


def _clone_structure(value: Any) -> Any:
    if isinstance(value, (Tensor, TensorDictBase)):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone_structure(v) for v in value)
    return value


def _copy_into(static: Any, value: Any) -> None:
    if isinstance(static, Tensor):
        static.copy_(value)
    elif isinstance(static, TensorDictBase):
        static.update_(value)
    elif isinstance(static, (tuple, list)):
        for s, v in zip(static, value):
            _copy_into(s, v)


class CudaGraphModule:
    """Run ``module`` through a CUDA graph: ``warmup`` eager calls (on a side stream),
    then one call captures the graph, and every later call copies its inputs into the
    captured ones and replays it. Inputs must keep their shapes, dtypes and devices
    (and a tensordict its keys) from call to call; outputs are copies.

    On a machine without CUDA (``torch.cuda.is_available()`` is False) nothing can be
    captured: construction warns and calls go straight to ``module``.

    ``in_keys`` / ``out_keys`` default to the module's.

    >>> import warnings
    >>> device = "cuda" if torch.cuda.is_available() else "cpu"
    >>> module = TensorDictModule(torch.nn.Linear(3, 1), in_keys=["x"], out_keys=["y"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     graphed = CudaGraphModule(module.to(device), warmup=1)
    >>> graphed.in_keys, graphed.out_keys          # the module's
    (['x'], ['y'])
    >>> torch.cuda.is_available() or "CUDA is not available" in str(caught[0].message)
    True
    >>> def batch(value):
    ...     return TensorDict(x=torch.full((2, 3), value, device=device), batch_size=[2])
    >>> for value in (0.0, 1.0, 2.0):              # warm-up, capture, replay (with CUDA)
    ...     out = graphed(batch(value))
    >>> out["y"].shape
    torch.Size([2, 1])
    >>> torch.allclose(out["y"], module(batch(2.0))["y"])
    True
    """

    def __init__(
        self,
        module: Callable,
        warmup: int = 2,
        in_keys: list | None = None,
        out_keys: list | None = None,
        device: torch.device | None = None,
    ) -> None:
        self.module = module
        self.warmup = warmup
        self.in_keys = (
            in_keys if in_keys is not None else getattr(module, "in_keys", None)
        )
        self.out_keys = (
            out_keys if out_keys is not None else getattr(module, "out_keys", None)
        )
        self.available = torch.cuda.is_available()
        if not self.available:
            warnings.warn(
                "CudaGraphModule: CUDA is not available on this machine, so no CUDA "
                "graph can be captured; calls run the module as it is",
                UserWarning,
                stacklevel=2,
            )
            return
        self.device = (
            torch.device(device)
            if device is not None
            else torch.device("cuda", torch.cuda.current_device())
        )
        self._calls = 0
        self._graph = None
        self._static_args = None
        self._static_kwargs = None
        self._static_out = None

    def __call__(self, *args, **kwargs):
        if not self.available:
            return self.module(*args, **kwargs)
        if self._graph is None:
            if self._calls < self.warmup:
                self._calls += 1
                stream = torch.cuda.Stream(self.device)
                stream.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(stream):
                    out = self.module(*args, **kwargs)
                torch.cuda.current_stream(self.device).wait_stream(stream)
                return out
            self._static_args = _clone_structure(args)
            self._static_kwargs = {k: _clone_structure(v) for k, v in kwargs.items()}
            self._graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self._graph):
                self._static_out = self.module(
                    *self._static_args, **self._static_kwargs
                )
        else:
            _copy_into(self._static_args, args)
            for key, value in kwargs.items():
                _copy_into(self._static_kwargs[key], value)
        self._graph.replay()
        return _clone_structure(self._static_out)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(module={self.module}, warmup={self.warmup}, "
            f"in_keys={self.in_keys}, out_keys={self.out_keys})"
        )
