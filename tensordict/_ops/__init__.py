"""Runtime helpers for the generated ops in ``tensordict/_generated/`` (and nothing else).

They hold the few decisions every generated op shares, so that the generated code
reads as plain steps: align the operands, try one ``torch._foreach_*`` call, fall back
to a per-leaf loop where foreach rejects the leaves. Generated code calls them as
``_ops.<name>``; they live in one module per concern:

- :mod:`~tensordict._ops.operands`: operands aligned with the leaves, foreach calls;
- :mod:`~tensordict._ops.batch_shape`: the batch rules of shape ops (``*_rule``);
- :mod:`~tensordict._ops.reduction`: reductions and scans over batch dims;
- :mod:`~tensordict._ops.indexing`, :mod:`~tensordict._ops.device`,
  :mod:`~tensordict._ops.stacking`: the rules and helpers of those families;
- :mod:`~tensordict._ops.attributes`: what ``combine`` expressions call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# set_lazy_legacy(True): a stacking or batch-shape op whose spec entry says
# ``lazy: true`` returns a lazy stack / lazy view when ``lazy_legacy()`` is true.
from tensordict.utils import lazy_legacy  # noqa: F401  (the generated code calls it)

from tensordict._ops.operands import (  # noqa: F401
    PLAIN_NUMBERS,
    Repeated,
    _FOREACH_REJECTS,
    _NUMBER_TYPES,
    _SCALAR_OPERANDS,
    is_operand,
    operand_leaves,
    repeated,
    try_foreach,
    try_foreach_,
    write_into,
)
from tensordict._ops.batch_shape import (  # noqa: F401
    _SEQUENCES,
    _as_int,
    _describe,
    _leaf_batch_dims,
    _numel,
    _positional,
    assign_inplace,
    atleast_rule,
    batch_dim,
    batch_dim_tuple,
    expand_rule,
    flatten_rule,
    flip_rule,
    infer_shape,
    leaf_batch_dims,
    movedim_rule,
    narrow_rule,
    permute_rule,
    repeat_interleave_rule,
    repeat_rule,
    reshape_rule,
    roll_rule,
    rot90_rule,
    shape_arg,
    squeeze_rule,
    tile_rule,
    transpose_rule,
    unflatten_rule,
    unsqueeze_rule,
    view_rule,
)
from tensordict._ops.reduction import (  # noqa: F401
    _rebuild_levels,
    flatten_features,
    leaves_as_one,
    quantile_shape,
    rebuild_reduced,
    reduce_rule,
    transform_keys,
    unzip,
)
from tensordict._ops.indexing import (  # noqa: F401
    _DENSE,
    _NotDense,
    _dense_class,
    _rebuild_dense_each,
    _stand_in,
    chunk_rule,
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
from tensordict._ops.device import (  # noqa: F401
    _Leaf,
    _Node,
    _TO_KEYWORDS,
    _as_device,
    _index_node,
    _list_shape,
    _node_lists,
    _td_lists,
    _tree,
    cuda_device_rule,
    leaves_at,
    nested_dict_result,
    nested_lists_result,
    new_device_rule,
    new_rule,
    new_tensor_leaf,
    new_tensor_rule,
    plain_tensor,
    to_device_rule,
    tolist_leaf,
    zero_grad_leaf,
)
from tensordict._ops.stacking import (  # noqa: F401
    _NON_TENSOR_ENTRIES,
    _dense_columns,
    _has_non_tensor,
    _stack_inputs,
    cat_rule,
    lazy_stack,
    lazy_view,
    stack_non_tensor,
    stack_rule,
    stacked_leaves,
)
from tensordict._ops.attributes import (  # noqa: F401
    _scalars,
    common_dtype,
    join_leaves,
    leaf_keys,
    present_result,
    scalar_result,
    total,
)

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from tensordict.base import TensorDictBase

    # Names the generated signatures use (see TYPE_NAMES in codegen/schema.py).
    TensorCollection: TypeAlias = TensorDictBase
    CompatibleType: TypeAlias = Any
