"""Heterogeneous lazy stacks (members whose tensors differ in shape) held in a
tensordict, as TorchRL's heterogeneous envs produce them: resets, rollouts stacked
into a preallocated buffer and entry_class must not stack the members' tensors."""

import torch

from tensordict import LazyStackedTensorDict, TensorDict


def _hetero(value: float = 0.0) -> LazyStackedTensorDict:
    return LazyStackedTensorDict.lazy_stack(
        [
            TensorDict(
                lidar=torch.full((8,), value), done=torch.zeros(1, dtype=torch.bool)
            ),
            TensorDict(
                lidar=torch.full((8,), value), done=torch.zeros(1, dtype=torch.bool)
            ),
            TensorDict(
                lidar=torch.full((0,), value), done=torch.zeros(1, dtype=torch.bool)
            ),
        ],
        0,
    )


def _step(value: float = 0.0) -> TensorDict:
    return TensorDict(agents=_hetero(value), x=torch.full((3,), value))


def test_update_with_batch_size_goes_member_by_member():
    node, reset = _hetero(1.0), _hetero(0.0)
    assert node.update(reset, update_batch_size=True) is node
    assert [t.tolist() for t in node.get("lidar", as_list=True)] == [[0.0] * 8] * 2 + [
        []
    ]


def test_stack_into_a_preallocated_buffer_holding_a_lazy_stack():
    buffer = _step().unsqueeze(-1).expand(4).clone().zero_()
    held = buffer["agents"]
    steps = [_step(float(i)) for i in range(4)]
    assert torch.stack(steps, 0, out=buffer) is buffer
    assert buffer["agents"] is held and held.batch_size == (4, 3)
    assert [t.shape for t in held.get("lidar", as_list=True)] == [
        (4, 8),
        (4, 8),
        (4, 0),
    ]
    assert held[:, 0]["lidar"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert buffer["x"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_entry_class_and_keys_do_not_stack_the_members_tensors():
    stack = _hetero()
    assert stack.entry_class("lidar") is torch.Tensor
    outer = LazyStackedTensorDict.lazy_stack([_step().clone() for _ in range(3)], -1)
    keys = set(outer.keys(True, True))
    assert ("agents", "lidar") in keys and "x" in keys
    assert ("agents", "lidar") in outer.keys(True, True)


def test_apply_keeps_nested_tensordicts_empty_to_begin_with():
    # a collector's state dict goes through apply with env_state_dict empty
    state = TensorDict(
        env_state_dict={}, frames=torch.tensor(3), nested={"f": torch.ones(1)}
    )
    out = state.apply(lambda x: x)
    assert sorted(out.keys()) == ["env_state_dict", "frames", "nested"]
    emptied = state.apply(lambda x: None)  # emptied by fn: dropped
    assert list(emptied.keys()) == ["env_state_dict"]
    assert (
        state.apply(lambda x: x, filter_empty=True).get("env_state_dict", None) is None
    )


def test_share_memory_of_a_held_heterogeneous_stack():
    # multiprocess collectors share each batch before sending it to the main process
    step = _step()
    assert step.share_memory_() is step
    assert step.is_locked and step["agents"].is_shared()
    assert all(member.is_shared() for member in step["agents"].tensordicts)
