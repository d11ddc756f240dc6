"""The calls that ``test_bench_op_overhead.py`` times, one per op of the spec, apart
from the spec reading (pyyaml) so that ``paired.py`` can import them in 0.15.3's venv.

The call for an op comes from its family (``FAMILY_CALL``) unless ``CALLS`` names one
(for ops that need arguments); every call is ``fn(td, other) -> result`` on two
tensordicts from ``make_td``.
"""

import torch
from tensordict import TensorDict

NEEDS_CUDA = {"cuda", "pin_memory", "pin_memory_", "record_stream"}


def make_td(dtype=torch.float32):
    def leaf(value):
        return torch.full((1, 1), value).to(dtype)

    return TensorDict(
        {
            "a": leaf(0.5),
            "b": leaf(0.25),
            "c": leaf(0.75),
            "n": {"d": leaf(0.1), "e": leaf(0.2)},
        },
        batch_size=[1, 1],
    )


MASK = torch.ones(1, 1, dtype=torch.bool)
INDEX = torch.zeros(1, 1, dtype=torch.long)

# Family defaults: ``fn(td, other) -> result``.
FAMILY_CALL = {
    "pointwise": lambda name: lambda td, other: getattr(td, name)(),
    "binary": lambda name: lambda td, other: getattr(td, name)(other),
    "reduction": lambda name: lambda td, other: getattr(td, name)(dim=0),
    "cast": lambda name: lambda td, other: getattr(td, name)(),
    "device": lambda name: lambda td, other: getattr(td, name)(),
    "attributes": lambda name: lambda td, other: getattr(td, name),
    "batch_shape": lambda name: lambda td, other: getattr(td, name)(),
    "indexing": lambda name: lambda td, other: getattr(td, name)(),
    "stacking": lambda name: lambda td, other: getattr(torch, name)([td, other], 0),
    "loss": lambda name: lambda td, other: getattr(torch.nn.functional, name)(
        td, other
    ),
}


def grad_of_double(td, other):
    """``torch.autograd.grad`` needs a graph: d(2x)/dx, weighted by ``other``."""
    x = td.clone().requires_grad_()
    return torch.autograd.grad(x * 2, x, other)


# Ops whose call needs arguments (or is not a plain method call).
CALLS = {
    # attributes: predicates and counts are methods
    "is_contiguous": lambda td, o: td.is_contiguous(),
    "is_floating_point": lambda td, o: td.is_floating_point(),
    "data_ptr": lambda td, o: td.data_ptr(),
    "bytes": lambda td, o: td.bytes(),
    "param_count": lambda td, o: td.param_count(),
    "stack_from_tensordict": lambda td, o: td.stack_from_tensordict(),
    "cat_from_tensordict": lambda td, o: td.cat_from_tensordict(),
    # binary ops with more operands
    "clamp": lambda td, o: td.clamp(0.1, 0.9),
    "lerp": lambda td, o: td.lerp(o, 0.5),
    "lerp_": lambda td, o: td.lerp_(o, 0.5),
    "addcmul": lambda td, o: td.addcmul(o, o),
    "addcmul_": lambda td, o: td.addcmul_(o, o),
    "addcdiv": lambda td, o: td.addcdiv(o, o),
    "addcdiv_": lambda td, o: td.addcdiv_(o, o),
    "bitwise_and": lambda td, o: td.bool().bitwise_and(o.bool()),
    "logical_and": lambda td, o: td.logical_and(o),
    "__or__": lambda td, o: td.bool() | o.bool(),
    "__xor__": lambda td, o: td.bool() ^ o.bool(),
    "__invert__": lambda td, o: ~td.bool(),
    "autograd_grad": grad_of_double,
    # cast
    "type": lambda td, o: td.type(torch.float64),
    # device
    "to": lambda td, o: td.to(torch.float64),
    "requires_grad_": lambda td, o: td.requires_grad_(False),
    "fill_": lambda td, o: td.fill_("a", 1.0),
    "new_zeros": lambda td, o: td.new_zeros(1, 1),
    "new_ones": lambda td, o: td.new_ones(1, 1),
    "new_empty": lambda td, o: td.new_empty(1, 1),
    "new_full": lambda td, o: td.new_full((1, 1), 2.0),
    "new_tensor": lambda td, o: td.new_tensor(o),
    "zeros_like": lambda td, o: torch.zeros_like(td),
    "ones_like": lambda td, o: torch.ones_like(td),
    "empty_like": lambda td, o: torch.empty_like(td),
    "full_like": lambda td, o: torch.full_like(td, 2.0),
    "rand_like": lambda td, o: torch.rand_like(td),
    "randn_like": lambda td, o: torch.randn_like(td),
    # indexing
    "split": lambda td, o: td.split(1, 0),
    "chunk": lambda td, o: td.chunk(1, 0),
    "tensor_split": lambda td, o: td.tensor_split(1, 0),
    "unbind": lambda td, o: td.unbind(0),
    "gather": lambda td, o: td.gather(0, INDEX),
    "masked_fill": lambda td, o: td.masked_fill(MASK, 0.0),
    "masked_fill_": lambda td, o: td.masked_fill_(MASK, 0.0),
    "masked_select": lambda td, o: td.masked_select(MASK),
    "where": lambda td, o: td.where(MASK, o),
    # reductions
    "all": lambda td, o: td.all(),
    "any": lambda td, o: td.any(),
    "quantile": lambda td, o: td.quantile(0.5, dim=0),
    "cummin": lambda td, o: td.cummin(0),
    "cummax": lambda td, o: td.cummax(0),
    "softmax": lambda td, o: td.softmax(0),
    "norm": lambda td, o: td.norm(),
    "logsumexp": lambda td, o: td.logsumexp(0),
    # batch shape
    "view": lambda td, o: td.view(-1),
    "reshape": lambda td, o: td.reshape(-1),
    "permute": lambda td, o: td.permute(1, 0),
    "transpose": lambda td, o: td.transpose(0, 1),
    "swapdims": lambda td, o: td.swapdims(0, 1),
    "swapaxes": lambda td, o: td.swapaxes(0, 1),
    "movedim": lambda td, o: td.movedim(0, 1),
    "moveaxis": lambda td, o: td.moveaxis(0, 1),
    "squeeze": lambda td, o: td.squeeze(0),
    "unsqueeze": lambda td, o: td.unsqueeze(0),
    "flatten": lambda td, o: td.flatten(0, 1),
    "unflatten": lambda td, o: td.unflatten(0, (1, 1)),
    "expand": lambda td, o: td.expand(2, 1, 1),
    "expand_as": lambda td, o: td.expand_as(torch.zeros(2, 1, 1)),
    "broadcast_to": lambda td, o: td.broadcast_to((2, 1, 1)),
    "repeat": lambda td, o: td.repeat(1, 2),
    "repeat_interleave": lambda td, o: td.repeat_interleave(2, dim=0),
    "tile": lambda td, o: td.tile((1, 2)),
    "flip": lambda td, o: td.flip(0),
    "roll": lambda td, o: td.roll(1, 0),
    "rot90": lambda td, o: td.rot90(1, (0, 1)),
    "narrow": lambda td, o: td.narrow(0, 0, 1),
}


def call_for(family: str, name: str):
    """``fn(td, other)`` timing op ``name`` of ``family``."""
    return CALLS.get(name) or FAMILY_CALL[family](name)
