"""A user's script, type-checked with ``mypy --strict`` (tests/test_typing.py): ops on
a TensorDict, a lazy stack and both tensorclass forms."""

from __future__ import annotations

import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    TensorClass,
    TensorDict,
    TensorDictBase,
    tensorclass,
)


class Derived(TensorClass):
    image: torch.Tensor
    label: torch.Tensor


@tensorclass
class Decorated:
    obs: torch.Tensor
    reward: torch.Tensor


def dense_ops() -> TensorDictBase:
    td = TensorDict(a=torch.zeros(3, 4), b={"c": torch.ones(3)}, batch_size=[3])
    doubled: TensorDict = (td * 2).abs().float()
    total = doubled.sum(0)  # Self | Tensor: a tensor with reduce=True
    assert isinstance(total, TensorDict)
    picked: TensorDict = td[0]
    a: torch.Tensor = td["a"]
    td.set("d", a.clone())
    reshaped: TensorDict = td.reshape(-1).unsqueeze(0)
    moved: TensorDict = reshaped.to("cpu").clone()
    stacked = tensordict.stack([picked, picked], 0)
    assert stacked.batch_size == (2,) and total.batch_size == ()
    out = moved.exclude("d").apply(lambda x: x + 1)
    assert out is not None
    return out


def lazy_ops() -> LazyStackedTensorDict:
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2)), stack_dim=0
    )
    plus: LazyStackedTensorDict = lazy + 1
    first = lazy[0]
    a: torch.Tensor = lazy.get("a")
    assert a.shape == (2, 2) and first.batch_size == ()
    # shape ops taking (*args, **kwargs), as 0.15.3 lists them, are typed Any
    back: LazyStackedTensorDict = plus.unsqueeze(0).squeeze(0)
    return back


def derived_ops() -> Derived:
    data = Derived(image=torch.zeros(4, 3), label=torch.zeros(4), batch_size=[4])
    image: torch.Tensor = data.image
    out: Derived = (data * 2).abs().clamp_min(torch.tensor(0.0))
    assert image.shape == (4, 3)
    first_two: Derived = out[:2]  # td[index] is typed Any: td["key"] is a tensor
    return first_two


def decorated_ops() -> Decorated:
    data = Decorated(obs=torch.zeros(4, 3), reward=torch.zeros(4), batch_size=[4])
    obs: torch.Tensor = data.obs
    out: Decorated = (data * 2).abs().to("cpu")
    assert obs.shape == (4, 3)
    first_two: Decorated = out[:2]
    return first_two


if __name__ == "__main__":
    dense_ops()
    lazy_ops()
    derived_ops()
    decorated_ops()
