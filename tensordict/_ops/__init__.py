"""Runtime helpers for the generated ops in ``tensordict/_generated/`` (and nothing else).

They hold the few decisions every generated op shares, so that the generated code
reads as plain steps: align the operands, try one ``torch._foreach_*`` call, fall back
to a per-leaf loop where foreach rejects the leaves, check a batch rule. Generated code
calls them as ``_ops.<name>``; this package exports exactly those names (a test checks
it), and hand-written code imports what it needs from the module that defines it:

- :mod:`~tensordict._ops.operands`: operands aligned with the leaves, foreach calls;
- :mod:`~tensordict._ops.batch_shape`: the batch rules of shape ops (``*_rule``);
- :mod:`~tensordict._ops.reduction`: reductions and scans over batch dims;
- :mod:`~tensordict._ops.indexing`, :mod:`~tensordict._ops.device`,
  :mod:`~tensordict._ops.stacking`: the rules and helpers of those families;
- :mod:`~tensordict._ops.attributes`: what the attribute combiners call;
- :mod:`~tensordict._ops.lock`: locked inputs give locked results (``keeps_lock``).

This layer knows only ``tensordict.base`` (and the helpers below it): it reaches the
concrete classes through ``tensordict._registry.container_class``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tensordict._ops.attributes import (
    common_dtype,
    join_leaves,
    present_result,
    scalar_result,
    total,
    leaf_bytes,
)
from tensordict._ops.batch_shape import (
    assign_inplace,
    atleast_rule,
    batch_dim,
    expand_rule,
    flatten_rule,
    flip_rule,
    movedim_rule,
    narrow_rule,
    permute_rule,
    repeat_interleave_rule,
    repeat_rule,
    reshape_rule,
    roll_rule,
    rot90_rule,
    squeeze_rule,
    tile_rule,
    transpose_rule,
    unflatten_rule,
    unsqueeze_rule,
    view_rule,
)
from tensordict._ops.names import (
    dropped_names,
    first_names,
    flattened_names,
    inserted_names,
    leading_names,
    moved_names,
    reduced_names,
    rot90_names,
    same_size_names,
    swapped_names,
    unflattened_names,
)
from tensordict._ops.device import (
    cuda_device_rule,
    grad_result,
    leaves_at,
    like_device_rule,
    moved_back,
    nested_dict_result,
    nested_lists_result,
    new_device_rule,
    new_rule,
    new_tensor_leaf,
    new_tensor_rule,
    plain_tensor,
    share_memory_leaf,
    to_device_rule,
    to_with_batch_size,
    tolist_leaf,
    zero_grad_leaf,
)
from tensordict._ops.indexing import (
    chunk_rule,
    cut_by_index,
    expand_index,
    expand_mask,
    gather_rule,
    mask_rule,
    masked_select_rule,
    rebuild_each,
    split_rule,
    tensor_split_rule,
    unbind_rule,
    where_rule,
)
from tensordict._ops.lock import keep_lock
from tensordict._ops.operands import (
    PLAIN_NUMBERS,
    batch_broadcast,
    compare_non_tensor,
    fill_defaults,
    is_operand,
    operand_leaves,
    try_foreach,
    try_foreach_,
    write_into,
)
from tensordict._ops.reduction import (
    flatten_features,
    leaves_as_one,
    loss_result,
    quantile_shape,
    rebuild_reduced,
    reduce_batch_rule,
    reduce_leaves,
    reduce_one_rule,
    reduce_rule,
    transform_keys,
    unzip,
)
from tensordict._ops.stacking import (
    cat_rule,
    explain_stack_error,
    explain_stack_shapes,
    lazy_stack,
    lazy_view,
    stack_non_tensor,
    stack_rule,
    stacked_leaves,
)

# set_lazy_legacy(True): a stacking or batch-shape op whose spec entry says
# ``lazy: true`` returns a lazy stack / lazy view when ``lazy_legacy()`` is true.
from tensordict.utils import lazy_legacy

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from tensordict.base import TensorDictBase

    # Names the generated signatures use (TYPE_NAMES in codegen/signature.py).
    TensorCollection: TypeAlias = TensorDictBase
    CompatibleType: TypeAlias = Any

__all__ = [
    "PLAIN_NUMBERS",
    "assign_inplace",
    "atleast_rule",
    "batch_dim",
    "cat_rule",
    "chunk_rule",
    "common_dtype",
    "compare_non_tensor",
    "cuda_device_rule",
    "dropped_names",
    "expand_index",
    "expand_mask",
    "expand_rule",
    "fill_defaults",
    "flatten_features",
    "flatten_rule",
    "first_names",
    "flattened_names",
    "flip_rule",
    "gather_rule",
    "grad_result",
    "inserted_names",
    "is_operand",
    "join_leaves",
    "keep_lock",
    "moved_back",
    "lazy_legacy",
    "lazy_stack",
    "lazy_view",
    "leading_names",
    "leaves_as_one",
    "leaves_at",
    "like_device_rule",
    "loss_result",
    "mask_rule",
    "masked_select_rule",
    "moved_names",
    "reduced_names",
    "movedim_rule",
    "narrow_rule",
    "nested_dict_result",
    "nested_lists_result",
    "new_device_rule",
    "new_rule",
    "new_tensor_leaf",
    "new_tensor_rule",
    "operand_leaves",
    "batch_broadcast",
    "permute_rule",
    "plain_tensor",
    "present_result",
    "quantile_shape",
    "rebuild_each",
    "cut_by_index",
    "rebuild_reduced",
    "reduce_batch_rule",
    "reduce_leaves",
    "reduce_one_rule",
    "reduce_rule",
    "repeat_interleave_rule",
    "repeat_rule",
    "reshape_rule",
    "roll_rule",
    "rot90_names",
    "rot90_rule",
    "same_size_names",
    "scalar_result",
    "share_memory_leaf",
    "split_rule",
    "squeeze_rule",
    "stack_non_tensor",
    "stack_rule",
    "stacked_leaves",
    "swapped_names",
    "tensor_split_rule",
    "tile_rule",
    "to_device_rule",
    "to_with_batch_size",
    "tolist_leaf",
    "total",
    "leaf_bytes",
    "transform_keys",
    "transpose_rule",
    "try_foreach",
    "try_foreach_",
    "unbind_rule",
    "unflatten_rule",
    "unflattened_names",
    "unsqueeze_rule",
    "unzip",
    "view_rule",
    "where_rule",
    "write_into",
    "zero_grad_leaf",]
