"""Errors that existing code catches by type and matches by 0.15.3's words.

Code written for 0.15.3 does ``pytest.raises(RuntimeError, match="Cannot modify
locked TensorDict")`` or ``except KeyError as e: if "already present" in str(e)``.
Our messages say more, but each one leads with 0.15.3's phrase (``re.search`` finds
it) and is an instance of the type 0.15.3 raised. One table: the call, on every
container kind it applies to, the type caught and the phrase matched.
"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from tensordict import (
    LazyStackedTensorDict,
    MemoryMappedTensor,
    TensorDict,
    set_lazy_legacy,
    tensorclass,
)
from tensordict.nn import TensorDictModule, TensorDictSequential
from tensordict.utils import _LOCK_ERROR


@tensorclass
class _Pair:
    a: torch.Tensor
    b: torch.Tensor


def _dense():
    return TensorDict(a=torch.zeros(4, 3, 2), b=torch.zeros(4, 3), batch_size=[4, 3])


def _nested():
    td = _dense()
    td["nested"] = TensorDict(c=torch.zeros(4, 3, 1), batch_size=[4, 3])
    return td


def _lazy():
    parts = [TensorDict(a=torch.zeros(3, 2), b=torch.zeros(3), batch_size=[3])] * 4
    return LazyStackedTensorDict.lazy_stack([p.clone() for p in parts], 0)


def _tensorclass():
    return _Pair(a=torch.zeros(4, 3, 2), b=torch.zeros(4, 3), batch_size=[4, 3])


def _sub():
    return _dense()._get_sub_tensordict((slice(None), slice(None)))


KINDS = {
    "dense": _dense,
    "nested": _nested,
    "lazy": _lazy,
    "tensorclass": _tensorclass,
    "sub": _sub,
}
ALL = tuple(KINDS)


def _locked(make):
    def build():
        return make().lock_()

    return build


def _write_wrong_batch(td):
    td[0] = TensorDict(a=torch.zeros(6, 2), b=torch.zeros(6), batch_size=[6])


def _where_missing(td):
    mask = torch.ones(td.shape, dtype=torch.bool)
    td.where(mask, TensorDict(batch_size=td.shape))


def _lazy_view():
    with set_lazy_legacy(True):
        return _dense().unsqueeze(0)


# (name, kinds, call, exception type, 0.15.3's phrase)
CASES = [
    (
        "bool",
        ALL,
        lambda td: bool(td),
        RuntimeError,
        "Converting a tensordict to boolean value is not permitted",
    ),
    (
        "rename onto an existing key",
        ("dense", "nested", "lazy", "sub"),
        lambda td: td.rename_key_("a", "b", safe=True),
        KeyError,
        "already present in TensorDict",
    ),
    (
        "write a tensordict of another batch size at an index",
        ALL,
        _write_wrong_batch,
        RuntimeError,
        "differs from the source batch size",
    ),
    (
        "transpose out of range",
        ALL,
        lambda td: td.transpose(-5, -6),
        ValueError,
        "dim0 and dim1 must be within the range of the number of dimensions",
    ),
    (
        "transpose out of range (legacy words)",
        ("dense", "lazy"),
        lambda td: td.transpose(-5, -6),
        ValueError,
        "The provided dimensions are incompatible",
    ),
    (
        "unbind out of range",
        ("dense", "nested", "lazy", "tensorclass"),
        lambda td: td.unbind(5),
        IndexError,
        "Incompatible dim 5 for tensordict with shape",
    ),
    (
        "unsqueeze out of range",
        ("dense", "nested", "lazy"),
        lambda td: td.unsqueeze(7),
        RuntimeError,
        "unsqueezing is allowed for dims comprised between",
    ),
    (
        "where without pad",
        ("dense", "nested", "lazy"),
        _where_missing,
        KeyError,
        "not found and no pad value provided",
    ),
    (
        "in-place set of a missing key on a lazy stack",
        ("lazy",),
        lambda td: td.set_("missing", torch.zeros(4, 3)),
        KeyError,
        "setting a value in-place on a stack of TensorDict",
    ),
    (
        "set_ of a value of another shape",
        ("dense", "nested", "tensorclass"),
        lambda td: td.set_("b", torch.zeros(4, 3, 7)),
        ValueError,
        "Failed to update 'b'",
    ),
    (
        "add a key to a locked tensordict",
        ("dense", "nested", "lazy"),
        lambda td: _locked(lambda: td)().set("z", torch.zeros(4, 3)),
        RuntimeError,
        re.escape(_LOCK_ERROR),
    ),
    (
        "delete from a locked tensordict",
        ("dense", "nested", "lazy"),
        lambda td: _locked(lambda: td)().del_("a"),
        RuntimeError,
        "Cannot modify locked TensorDict",
    ),
    (
        "in-place exclude on a view",
        ("sub",),
        lambda td: td.exclude("a", inplace=True),
        RuntimeError,
        "Cannot call exclude",
    ),
    (
        "in-place select on a view",
        ("sub",),
        lambda td: td.select("a", inplace=True),
        RuntimeError,
        "Cannot call select",
    ),
    (
        "in-place flatten_keys on a view",
        ("sub",),
        lambda td: td.flatten_keys(inplace=True),
        RuntimeError,
        "Cannot call exclude",
    ),
    (
        "view of a sub-tensordict",
        ("sub",),
        lambda td: td.view(-1),
        RuntimeError,
        "Cannot call `view`",
    ),
]


def _params():
    for name, kinds, call, exc, phrase in CASES:
        for kind in kinds:
            yield pytest.param(KINDS[kind], call, exc, phrase, id=f"{name}-{kind}")


@pytest.mark.parametrize("make, call, exc, phrase", list(_params()))
def test_phrase(make, call, exc, phrase):
    td = make()
    with pytest.raises(exc, match=phrase):
        call(td)


# ----------------------------------------------------------------------------- single
@pytest.mark.parametrize(
    "op, phrase",
    [
        ("permute", "Make it dense"),
        ("unsqueeze", "Make it dense"),
        ("view", "Cannot call `view`"),
    ],
)
def test_lazy_view_refuses_outside_legacy(op, phrase):
    view = _lazy_view()
    args = {"permute": (1, 0, 2), "unsqueeze": (0,), "view": (-1,)}[op]
    with set_lazy_legacy(False), pytest.raises(RuntimeError, match=phrase):
        getattr(view, op)(*args)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda td: td.fliplr(), RuntimeError, "fliplr requires at least 2"),
        (lambda td: td.rot90(), RuntimeError, "rot90 requires at least 2"),
        (lambda td: td.split(1, 1), IndexError, "Incompatible dim"),
        (
            lambda td: td.gather(3, torch.zeros(3, dtype=torch.long)),
            RuntimeError,
            "Cannot gather tensordict",
        ),
        (
            lambda td: torch.cat([td, td], 4),
            RuntimeError,
            "dim must be in the range 0 <= dim < len",
        ),
        (
            lambda td: td.permute(4),
            ValueError,
            "Received an permutation order incompatible",
        ),
    ],
)
def test_dim_phrases(call, exc, phrase):
    td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
    with pytest.raises(exc, match=phrase):
        call(td)


def test_flatten_keys_collision():
    td = TensorDict({"a.b": torch.zeros(()), "a": {"b": torch.zeros(())}})
    with pytest.raises(KeyError, match="Flattening keys in tensordict causes keys"):
        td.flatten_keys(".")


def test_nested_value_of_wrong_batch_size():
    data = TensorDict(batch_size=[3, 4])
    with pytest.raises(
        RuntimeError, match=re.escape("the Tensor smth has shape torch.Size([1]) which")
    ):
        data.set("z", TensorDict({"smth": torch.zeros(1)}, []))


def test_lazy_stack_append_checks():
    stack = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(2), batch_size=[2])]
    )
    with pytest.raises(TypeError, match="Expected new value to be TensorDictBase"):
        stack.append(torch.zeros(2))
    with pytest.raises(ValueError, match="Batch sizes in tensordicts differs"):
        stack.append(TensorDict(a=torch.zeros(3), batch_size=[3]))
    with pytest.raises(RuntimeError, match="stacking tensordicts requires"):
        LazyStackedTensorDict.lazy_stack(
            [TensorDict(batch_size=[3, 4]), TensorDict(batch_size=[3, 5])],
            strict_shape=True,
        )


def test_lazy_stack_out_of_another_batch_size():
    out = TensorDict(a=torch.zeros(3, 2), batch_size=[3, 2])
    tds = [TensorDict(a=torch.zeros(2), batch_size=[2])] * 2
    with pytest.raises(RuntimeError, match="out.batch_size and stacked"):
        LazyStackedTensorDict.lazy_stack(tds, 0, out=out)


class TestBackward:
    def test_implicit_non_scalar(self):
        out = TensorDict(a=torch.randn(3, requires_grad=True) * 2)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only"):
            out.backward()

    def test_missing_gradient_entry(self):
        out = TensorDict(a=torch.randn(3, requires_grad=True) * 2)
        with pytest.raises(KeyError, match="Missing gradient entry for key 'a'"):
            out.backward(TensorDict(b=torch.ones(3)))

    def test_gradient_type(self):
        out = TensorDict(a=torch.randn(3, requires_grad=True) * 2)
        with pytest.raises(TypeError, match="gradient must be a TensorDictBase"):
            out.backward(torch.ones(3))

    def test_nothing_requires_grad(self):
        with pytest.raises(RuntimeError, match="no leaf tensor requiring gradients"):
            TensorDict(a=torch.randn(3)).backward()

    def test_entries_not_requiring_grad_take_no_part(self):
        x = torch.randn(3, requires_grad=True)
        TensorDict(a=(x * 2).sum(), b=torch.ones(4), c="text").backward()
        assert torch.allclose(x.grad, torch.full((3,), 2.0))


def test_params_in_place_write_names_autograd():
    params = TensorDict.from_modules(nn.Linear(2, 3), nn.Linear(2, 3), as_module=True)
    with pytest.raises(ValueError, match="Failed to update"):
        params.apply(lambda x: x + 1, inplace=True)
    sub = params._get_sub_tensordict(0)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        sub["weight"] = torch.ones(3, 2)


def test_out_with_grad_refused_as_torch():
    td = TensorDict(a=torch.randn(3, 4, requires_grad=True), batch_size=[3, 4])
    index = torch.zeros(3, 2, dtype=torch.long)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        td.gather(1, index, out=td.gather(1, index).detach())
    with torch.no_grad():
        td.gather(1, index, out=td.gather(1, index))


class TestMemmap:
    def test_existing_file(self, tmp_path):
        td = TensorDict(a=torch.zeros(3)).memmap_(tmp_path / "one")
        with pytest.raises(
            RuntimeError,
            match="A filename was provided but the tensor already has a file associated",
        ):
            td.memmap_(tmp_path / "two")

    def test_symlink_file(self, tmp_path):
        target = tmp_path / "target"
        target.write_bytes(b"unchanged")
        link = tmp_path / "file.memmap"
        link.symlink_to(target)
        with pytest.raises(RuntimeError, match="through symlink"):
            MemoryMappedTensor.from_tensor(
                torch.zeros(()), filename=link, existsok=True
            )
        assert target.read_bytes() == b"unchanged"

    def test_symlink_folder(self, tmp_path):
        (tmp_path / "saved").mkdir()
        (tmp_path / "outside").mkdir()
        (tmp_path / "saved" / "nested").symlink_to(tmp_path / "outside")
        td = TensorDict({"nested": {"x": torch.zeros(3)}})
        with pytest.raises(RuntimeError, match="TensorDict through symlink"):
            td.memmap(tmp_path / "saved")
        assert not list((tmp_path / "outside").iterdir())

    @pytest.mark.parametrize("ctor", ["zeros", "ones", "empty"])
    def test_constructor_needs_a_size(self, ctor):
        with pytest.raises(TypeError):
            getattr(MemoryMappedTensor, ctor)(dtype=torch.float)
        assert getattr(MemoryMappedTensor, ctor)(()).shape == ()

    def test_full_needs_a_size(self):
        with pytest.raises(TypeError):
            MemoryMappedTensor.full(fill_value=2)


def test_from_dict_both_sizes():
    with pytest.raises(ValueError, match="both"):
        TensorDict.from_dict({"a": torch.zeros(3, 4)}, batch_size=[3], batch_dims=1)


class TestModules:
    def test_missing_input(self):
        module = TensorDictModule(nn.Linear(2, 3), in_keys=["a"], out_keys=["b"])
        with pytest.raises(
            KeyError,
            match="Some tensors that are necessary for the module call may not have "
            "not been found in the input tensordict",
        ):
            module(TensorDict(c=torch.randn(())))

    @pytest.mark.parametrize("keys", [["d"], ["d", "e"]])
    def test_select_out_keys_list(self, keys):
        module = TensorDictModule(
            lambda x: (x, x, x), in_keys=["a"], out_keys=["c", "d", "e"]
        )
        with pytest.raises((RuntimeError, ValueError), match="key should be a "):
            module.select_out_keys(keys)

    def test_select_out_keys_unknown(self):
        module = TensorDictModule(
            lambda x: (x, x, x), in_keys=["a"], out_keys=["c", "d", "e"]
        )
        with pytest.raises(ValueError, match="Can't select non existent"):
            module.select_out_keys(("d", "e"))
        with pytest.raises(KeyError):  # our type, too
            module.select_out_keys("zz")

    def test_reset_batched_parameters(self):
        seq = TensorDictSequential(
            TensorDictModule(nn.Linear(1, 1), in_keys=["in"], out_keys=["mid"])
        )
        params = TensorDict.from_module(seq)
        with pytest.raises(RuntimeError, match="does not support batched"):
            seq.reset_parameters_recursive(params.expand(2, 3).clone())

    def test_from_modules_lazy_stack(self):
        modules = [nn.Linear(3, 4) for _ in range(2)]
        with pytest.raises(RuntimeError, match="within a TensorDictParams"):
            TensorDict.from_modules(*modules, as_module=True, lazy_stack=True)
        lazy = [nn.LazyLinear(4) for _ in range(2)]
        with pytest.raises(
            RuntimeError, match="lasy_stack=True is not compatible with lazy modules."
        ):
            TensorDict.from_modules(*lazy, lazy_stack=True)


@pytest.mark.parametrize("stack_dim", [0, 1])
@pytest.mark.parametrize("lazy", [False, True])
def test_vmap_keeps_a_locked_argument_locked(stack_dim, lazy):
    parts = [TensorDict(a=torch.ones(1), batch_size=[1]) for _ in range(2)]
    if lazy:
        x = LazyStackedTensorDict.lazy_stack(parts, stack_dim)
    else:
        x = torch.stack(parts, stack_dim)
    x.lock_()
    with pytest.raises(RuntimeError, match="Cannot modify"):
        torch.vmap(lambda t: t.set("b", t["a"] + 1), (0,))(x)


def test_tensorclass_reserved_name():
    with pytest.raises(
        AttributeError, match="Attribute name reshape can't be used with @tensorclass"
    ):

        @tensorclass
        class Bad:
            reshape: torch.Tensor


def test_print_options_and_storage():
    from tensordict import set_printoptions

    with pytest.raises(TypeError, match="Unknown printoptions"):
        set_printoptions(nonexistent_option=True)
    with pytest.raises(ValueError, match="Unknown storage backend"):
        TensorDict.from_schema({"a": torch.float}, storage="foobar")
