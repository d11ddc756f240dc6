"""Results are freed as soon as the caller drops them: no call of this package leaves a
reference cycle behind, which would keep its tensors (often large) alive until the
garbage collector happens to run."""

from __future__ import annotations

import gc

import pytest
import torch
from torch import nn

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass


@tensorclass
class Pair:
    a: torch.Tensor
    b: torch.Tensor


def _td():
    return TensorDict(
        a=torch.zeros(3, 4),
        b=TensorDict(c=torch.ones(3, 4, 2), batch_size=[3, 4]),
        batch_size=[3, 4],
    )


def _pair():
    return Pair(a=torch.zeros(3, 4), b=torch.ones(3, 4), batch_size=[3])


def _flatten_block(td):
    with td.flatten_keys() as flat:
        flat["b.c"] = flat["b.c"] + 1


def _unflatten_block(td):
    flat = td.flatten_keys()
    with flat.unflatten_keys() as nested:
        nested["b", "c"] = nested["b", "c"] + 1


def _to_module_block(td):
    module = nn.Linear(2, 2)
    params = TensorDict.from_module(module).clone()
    with params.to_module(module):
        module(torch.zeros(1, 2))


def _to_module_swap(td):
    module = nn.Linear(2, 2)
    return TensorDict.from_module(module).clone().to_module(module, return_swap=True)


CALLS = {
    "clone": lambda td: td.clone(),
    "add": lambda td: td + 1,
    "apply": lambda td: td.apply(lambda x: x * 2),
    "index": lambda td: td[0],
    "reshape": lambda td: td.reshape(-1),
    "stack": lambda td: torch.stack([td, td]),
    "unbind": lambda td: td.unbind(0),
    "flatten_keys": lambda td: td.flatten_keys(),
    "unflatten_keys": lambda td: td.flatten_keys().unflatten_keys(),
    "with flatten_keys()": _flatten_block,
    "with unflatten_keys()": _unflatten_block,
    "with to_module()": _to_module_block,
    "to_module(return_swap=True)": _to_module_swap,
    "lazy stack ops": lambda td: (LazyStackedTensorDict(td, td) + 1)[0],
    "consolidate": lambda td: td.consolidate(),
    "torch.stack of tensorclasses": lambda td: torch.stack([_pair(), _pair()]),
    "torch.zeros_like of a tensorclass": lambda td: torch.zeros_like(_pair()),
    "tensorclass ops": lambda td: (_pair() * 2).clone()[0],
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_call_leaves_no_reference_cycle(name):
    call, td = CALLS[name], _td()
    call(td)  # first-call caches (plans, compiled paths) are not garbage
    while gc.collect():  # what earlier tests left, and what freeing it let go
        pass
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = call(td)
        del result
        gc.collect()
        kinds = sorted({type(o).__name__ for o in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not kinds, f"{name} left objects in reference cycles: {kinds}"
