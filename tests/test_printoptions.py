"""set_printoptions / get_printoptions (docs/ecosystem.md, "Print options"): the seeds'
verbose repr stays the default; a compact form and the verbose-form options of 0.15.3
are there on request, as a context manager, a decorator or for good (``.set()``)."""

from __future__ import annotations

import pytest
import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    TensorDict,
    get_printoptions,
    set_printoptions,
    tensorclass,
)


@tensorclass
class _Obs:
    x: torch.Tensor
    label: str = "a"


def _td():
    return TensorDict(
        a=torch.zeros(3, 2),
        b={"c": torch.arange(3)},
        s="hi",
        batch_size=[3],
        device="cpu",
    )


def test_default_is_the_seeds_verbose_form():
    assert get_printoptions()["compact"] is False
    assert repr(TensorDict(a=torch.zeros(3), batch_size=[3])) == (
        "TensorDict(\n"
        "    fields={\n"
        "        a: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, "
        "is_shared=False)},\n"
        "    batch_size=torch.Size([3]),\n"
        "    device=None,\n"
        "    is_shared=False)"
    )


def test_compact_form():
    with set_printoptions(compact=True):
        assert repr(TensorDict(a=torch.zeros(3), batch_size=[3])) == (
            "TensorDict(batch_size=[3], fields={a: f32[]})"
        )
        assert repr(TensorDict()) == "TensorDict(batch_size=[], fields={})"
        assert repr(_td()) == (
            "TensorDict(batch_size=[3], device=cpu, fields={a: f32[2], b: {c: i64[]}, "
            "s: str})"
        )
        obs = _Obs(x=torch.zeros(3, dtype=torch.bfloat16), batch_size=[3])
        assert repr(obs) == "_Obs(batch_size=[3], fields={label: str, x: bf16[]})"
        assert repr(TensorDict(o=obs, batch_size=[3])) == (
            "TensorDict(batch_size=[3], fields={o: _Obs{label: str, x: bf16[]}})"
        )
        lazy = LazyStackedTensorDict(
            TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))
        )
        assert repr(lazy) == (
            "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={a: f32[2]})"
        )
        many = TensorDict(
            {f"entry_{i}": torch.zeros(2, dtype=torch.int8) for i in range(8)}
        )
        lines = repr(many).splitlines()
        assert lines[0] == "TensorDict(batch_size=[], fields={"
        assert lines[1] == "    entry_0: i8[2],"
        assert lines[-1] == "    entry_7: i8[2]})"


def test_compact_options():
    with set_printoptions(
        compact=True, show_dtype=False, show_batch_size=False, show_device=False
    ):
        assert repr(_td()) == "TensorDict(fields={a: [2], b: {c: []}, s: str})"


def test_verbose_options():
    td = TensorDict(b=torch.zeros(3), a=torch.ones(1))
    with set_printoptions(verbose=False):
        text = repr(td)
    assert "device" not in text and "dtype" not in text and "is_shared" not in text
    assert "a: Tensor(shape=torch.Size([1]))" in text
    with set_printoptions(sort_keys="insertion"):
        text = repr(td)
    assert text.index("b: Tensor") < text.index("a: Tensor")
    with set_printoptions(
        show_grad=True,
        show_is_contiguous=True,
        show_is_view=True,
        show_storage_size=True,
    ):
        text = repr(TensorDict(a=torch.zeros(3)))
    assert (
        "requires_grad=False, is_contiguous=True, is_view=False, storage_size=12"
        in text
    )
    with set_printoptions(plain=True):
        assert "mean=1, std=0" in repr(TensorDict(a=torch.ones(3)))
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))
    )
    with set_printoptions(verbose=False):
        text = repr(lazy)
    assert "a: Tensor(shape=torch.Size([2, 2]))" in text and "device" not in text


def test_verbose_only_option_turns_compact_off():
    with set_printoptions(compact=True):
        with set_printoptions(show_grad=True):
            assert get_printoptions()["compact"] is False
        with set_printoptions(show_grad=True, compact=True):
            assert get_printoptions()["compact"] is True


def test_context_manager_decorator_and_set_restore():
    before = get_printoptions()
    with set_printoptions(compact=True) as opts:
        assert isinstance(opts, set_printoptions)
        assert get_printoptions()["compact"] is True
    assert get_printoptions() == before

    @set_printoptions(compact=True, sort_keys="insertion")
    def inside():
        return get_printoptions()

    assert inside()["compact"] is True and inside()["sort_keys"] == "insertion"
    assert get_printoptions() == before
    # a failing block restores the options too
    with pytest.raises(RuntimeError):
        with set_printoptions(show_dtype=False):
            raise RuntimeError
    assert get_printoptions() == before
    try:
        set_printoptions(compact=True).set()
        assert get_printoptions()["compact"] is True
    finally:
        set_printoptions(compact=False).set()
    assert get_printoptions() == before
    # get_printoptions is a copy
    get_printoptions()["compact"] = True
    assert get_printoptions() == before


def test_unknown_option_raises_type_error():
    with pytest.raises(TypeError, match="'colour'"):
        set_printoptions(colour=True)
    with pytest.raises(ValueError, match="sort_keys"):
        set_printoptions(sort_keys="random")
    assert tensordict.utils.set_printoptions is set_printoptions


def test_set_then_exit_restores_the_options_it_replaced():
    # 0.15.3's global setter: ctx.set() applies for good, ctx.__exit__ undoes it
    before = get_printoptions()
    ctx = set_printoptions(show_is_shared=False)
    ctx.set()
    try:
        assert get_printoptions()["show_is_shared"] is False
        assert "\n    is_shared=" not in repr(TensorDict(a=torch.zeros(2)))
    finally:
        ctx.__exit__(None, None, None)
    assert get_printoptions() == before
    # exiting an options object never applied leaves the options alone
    set_printoptions(compact=True).__exit__(None, None, None)
    assert get_printoptions() == before


def test_unknown_option_message_names_printoptions():
    with pytest.raises(TypeError, match="Unknown printoptions"):
        set_printoptions(nonexistent_option=True)


def test_sort_keys_callable():
    td = TensorDict(xb=torch.zeros(2), ya=torch.zeros(2), za=torch.zeros(2))
    with set_printoptions(sort_keys=lambda key: key[::-1]):
        text = repr(td)
    lines = [line for line in text.split("\n") if "Tensor(" in line]
    keys = [line.strip().split(":")[0] for line in lines]
    assert keys == ["ya", "za", "xb"]


def test_tensorclass_repr_follows_the_options():
    obj = _Obs(x=torch.zeros(3, 4), batch_size=[3])
    with set_printoptions(
        show_device=False,
        show_is_shared=False,
        show_field_device=False,
        show_field_is_shared=False,
    ):
        text = repr(obj)
    assert text.startswith("_Obs(")
    assert "device=" not in text and "is_shared=" not in text
    with set_printoptions(show_batch_size=False):
        assert "batch_size=" not in repr(obj)
