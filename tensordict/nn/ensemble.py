"""EnsembleModule: several copies of a tensordict module, run at once with
``torch.vmap`` over their stacked parameters."""

from __future__ import annotations

import torch
from torch import nn

from tensordict._module_state import from_module
from tensordict._registry import container_class
from tensordict.base import TensorDictBase
from tensordict.nn.common import TensorDictModuleBase
from tensordict.nn.params import TensorDictParams

__all__ = ["EnsembleModule"]


class EnsembleModule(TensorDictModuleBase):
    """``num_copies`` copies of ``module``, each with its own parameters (initialised
    anew with ``reset_parameters`` where the submodules have it), run in one vectorized
    call. The output tensordict gets a leading dim of size ``num_copies``.

    With ``expand_input=True`` (the default) every copy reads the same input; with
    ``False`` the input must already have the leading ``num_copies`` dim (one slice
    per copy). The stacked parameters are ``params_td`` (a
    :class:`~tensordict.nn.TensorDictParams`).

    >>> import torch
    >>> from torch import nn
    >>> from tensordict import TensorDict
    >>> from tensordict.nn import TensorDictModule
    >>> module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    >>> ensemble = EnsembleModule(module, num_copies=4)
    >>> out = ensemble(TensorDict(x=torch.randn(5, 3), batch_size=[5]))
    >>> out.batch_size, out["y"].shape
    (torch.Size([4, 5]), torch.Size([4, 5, 2]))
    """

    def __init__(
        self, module: TensorDictModuleBase, num_copies: int, expand_input: bool = True
    ) -> None:
        super().__init__()
        if num_copies < 1:
            raise ValueError(
                f"EnsembleModule: num_copies must be >= 1, got {num_copies}"
            )
        self.module = module
        self.in_keys = list(module.in_keys)
        self.out_keys = list(module.out_keys)
        self.num_copies = num_copies
        self.expand_input = expand_input
        self.params_td = TensorDictParams(self._fresh_copies(), no_convert=True)

    def _fresh_copies(self) -> TensorDictBase:
        """``num_copies`` new initialisations of the module's tensors, stacked
        (parameters where the module has parameters, buffers where it has buffers)."""
        base = from_module(self.module, lock=False)
        copies = [
            (
                self.module.reset_parameters_recursive(base.detach().clone())
                if isinstance(self.module, TensorDictModuleBase)
                else base.detach().clone()
            )
            for _ in range(self.num_copies)
        ]
        stacked = torch.stack(copies, 0)
        for key, value in base.items(True, True):
            if isinstance(value, nn.Parameter):
                stacked.set(key, nn.Parameter(stacked.get(key), value.requires_grad))
        return stacked

    def reset_parameters_recursive(
        self, parameters: TensorDictBase | None = None
    ) -> TensorDictBase | None:
        """Re-initialise every copy (in place), or, given ``parameters``, return
        freshly initialised ones shaped like them."""
        fresh = self._fresh_copies()
        if parameters is not None:
            return fresh
        with torch.no_grad():
            for key, value in fresh.items(True, True):
                self.params_td.get(key).copy_(value)
        return None

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        td = tensordict
        if self.expand_input:
            td = td.expand(self.num_copies, *td.batch_size)
        elif not td.batch_size or td.batch_size[0] != self.num_copies:
            raise ValueError(
                f"EnsembleModule(num_copies={self.num_copies}, expand_input=False) "
                f"needs an input whose first batch dim is {self.num_copies}, got "
                f"batch_size {tuple(td.batch_size)}"
            )
        inner_batch = td.batch_size[1:]
        inputs = dict(td.items(True, True))
        params = dict(self.params_td.items(True, True))
        module = self.module
        make = container_class("TensorDict")

        def one_copy(inputs: dict, params: dict) -> dict:
            # inside torch.vmap: tensors without the copies' dim
            data = make(batch_size=inner_batch)
            for key, value in inputs.items():
                data.set(key, value)
            weights = make()
            for key, value in params.items():
                weights.set(key, value)
            with weights.to_module(module):
                out = module(data)
            return dict(out.items(True, True))

        outputs = torch.vmap(one_copy, (0, 0), randomness="different")(inputs, params)
        result = make(batch_size=td.batch_size)
        for key, value in outputs.items():
            result.set(key, value)
        return result

    def extra_repr(self) -> str:
        return (
            f"num_copies={self.num_copies}, expand_input={self.expand_input}, "
            f"in_keys={self.in_keys}, out_keys={self.out_keys}"
        )
