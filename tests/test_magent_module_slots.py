"""``to_module(preserve_module_state=False)`` with plain tensors: they stand for the
parameters as module attributes (as in 0.15.3), out of ``parameters()`` and
``state_dict()``; and strict ``torch.export`` of modules returning a tensordict."""

import torch
from torch import nn

from tensordict import TensorDict


def _names(module):
    return [name for name, _ in module.named_parameters()]


def test_plain_tensors_in_parameter_slots_are_attributes_while_swapped():
    module = nn.Linear(2, 3)
    module.register_buffer("scale", torch.ones(3))
    values = TensorDict.from_module(module).detach().clone()
    with values.to_module(module, preserve_module_state=False):
        assert module.weight is values["weight"]
        assert _names(module) == []
        assert list(module.state_dict()) == ["scale"]  # a buffer stays a buffer
    assert _names(module) == ["weight", "bias"]
    assert isinstance(module.weight, nn.Parameter)


def test_a_parameter_free_template_takes_parameters_back():
    template = nn.Linear(2, 3)
    TensorDict.from_module(template).data.to("meta").to_module(
        template, preserve_module_state=False
    )
    assert _names(template) == [] and list(template.state_dict()) == []
    assert template.weight.device == torch.device("meta")
    # a later to_module finds the attributes: parameters replace them
    params = TensorDict.from_module(nn.Linear(2, 3))
    swap = params.to_module(template, preserve_module_state=False)
    assert swap["weight"].device == torch.device("meta")
    assert template.weight is params["weight"]
    assert _names(template) == ["weight", "bias"]
    # and copying into them reaches the attributes too
    template2 = nn.Linear(2, 3)
    TensorDict.from_module(template2).detach().clone().zero_().to_module(
        template2, preserve_module_state=False
    )
    TensorDict.from_module(nn.Linear(2, 3)).detach().to_module(template2, inplace=True)
    assert template2.weight.abs().sum() > 0


def test_vmapped_parameters_stay_out_of_the_module_parameters():
    module = nn.Linear(2, 3)
    stacked = TensorDict.from_modules(nn.Linear(2, 3), nn.Linear(2, 3))
    seen = []

    def call(p, x):
        with p.to_module(module, preserve_module_state=False):
            seen.append(_names(module))
            return module(x)

    torch.vmap(call)(stacked, torch.randn(2, 2))
    assert seen == [[]]
    assert _names(module) == ["weight", "bias"]  # restored in their order


def test_preserve_module_state_keeps_the_parameter_slots():
    module = nn.Linear(2, 3)
    values = TensorDict.from_module(module).detach().clone()
    with values.to_module(module):
        assert _names(module) == ["weight", "bias"]
        assert isinstance(module.weight, nn.Parameter)


def test_strict_export_of_a_module_returning_a_tensordict():
    class Net(nn.Module):
        def forward(self, x):
            return TensorDict(a=x * 2, b={"c": x + 1}, batch_size=x.shape[:1])

    x = torch.randn(4, 3)
    exported = torch.export.export(Net(), (x,), strict=True)
    out = exported.module()(x)
    assert isinstance(out, TensorDict)
    assert out.batch_size == (4,)
    torch.testing.assert_close(out["b", "c"], x + 1)
    torch.testing.assert_close(out["a"], x * 2)


def test_strict_export_of_a_module_taking_and_returning_a_tensordict():
    class Net(nn.Module):
        def forward(self, td):
            return td.apply(lambda x: x * 2)

    td = TensorDict(a=torch.zeros(3), b={"c": torch.ones(3)}, batch_size=[3])
    exported = torch.export.export(Net(), (td,), strict=True)
    out = exported.module()(td)
    assert out.batch_size == (3,)
    torch.testing.assert_close(out["b", "c"], torch.full((3,), 2.0))


def test_compiled_flatten_with_paths_and_non_tensor_data():
    import torch.utils._pytree as pytree

    td = TensorDict(a=torch.zeros(3), s="hi", b={"c": torch.ones(3)}, batch_size=[3])

    @torch.compile(fullgraph=True, backend="eager")
    def f(td):
        paths = pytree.tree_flatten_with_path(td)[0]
        return pytree.tree_map(lambda x: x + 1, td), len(paths)

    out, count = f(td)
    assert count == 2
    assert out.batch_size == (3,) and out["s"] == "hi"
    torch.testing.assert_close(out["b", "c"], torch.full((3,), 2.0))
