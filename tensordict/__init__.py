"""tensordict: a dictionary of tensors that behaves like one tensor.

Indexing, reshaping, casting, moving to a device or reducing a tensordict does the same
to every entry in one call; every entry shares the leading ``batch_size`` dims.
"""

from tensordict._keys import (
    KEY_SEPARATOR,
    NestedKey,
    unravel_key,
    unravel_key_list,
    unravel_key_to_tuple,
)
from tensordict.base import NO_DEFAULT, TensorDictBase, is_tensor_collection
from tensordict._td import TensorDict
from tensordict._generated.functions import cat, stack
from tensordict.functional import from_dict, fromkeys, make_tensordict
from tensordict._lazy import LazyStackedTensorDict
from tensordict._consolidate import from_consolidated
from tensordict.functional import (
    dense_stack_tds,
    lazy_stack,
    maybe_dense_stack,
    merge_tensordicts,
    pad,
    pad_sequence,
)
from tensordict._modes import (
    capture_non_tensor_stack,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
)
from tensordict.utils import assert_allclose_td, assert_close
from tensordict._repr import get_printoptions, set_printoptions
from tensordict._compat import _is_leaf_nontensor as is_leaf_nontensor
from tensordict import _lazy_view, _torch_function  # noqa: F401  (register themselves)
from tensordict.tensorclass import (
    MetaData,
    NonTensorData,
    NonTensorStack,
    TensorClass,
    from_dataclass,
    is_non_tensor,
    is_tensorclass,
    tensorclass,
)
from tensordict.typedtensordict import TypedTensorDict
from tensordict._unbatched import UnbatchedTensor
from tensordict._module_state import from_module, from_modules
from tensordict.nn import (  # modules of tensordicts (tensordict/nn, docs/nn.md)
    TensorClassModuleBase,
    TensorClassModuleWrapper,
    TensorDictParams,
    as_tensordict_module,
)

from tensordict.memmap import MemoryMappedTensor
from tensordict._persistence import load, load_memmap, memmap, save
from tensordict._persistence import (  # single-file archives (docs/persistence.md)
    append_memmap,
    is_memmap_archive,
    pack_memmap,
    refresh_archive_checksums,
    unpack_memmap,
)
from tensordict.persistent import PersistentTensorDict, from_h5

# --- store (issue 29): tensordicts on a Redis-compatible server (docs/persistence.md)
from tensordict import store
from tensordict.store import LazyStackedTensorDictStore, TensorDictStore
# --- end store

from tensordict._pytree import from_pytree, register_nodes
from tensordict._interchange import (  # tables and files (docs/ecosystem.md)
    from_json,
    from_pandas,
    from_parquet,
    from_safetensors,
    to_safetensors,
)

# --- tables and chunked arrays (issue 29; docs/persistence.md): Arrow, CSV, zarr
from tensordict._arrow import from_arrow, to_arrow
from tensordict._interchange import from_csv
from tensordict import _zarr  # noqa: F401  (registers the zarr backend)
from tensordict.persistent import from_zarr

# --- end tables and chunked arrays

# converters (docs/ecosystem.md): TensorDict's classmethods, as 0.15.3 exports them
from_any = TensorDict.from_any
from_namedtuple = TensorDict.from_namedtuple
from_struct_array = TensorDict.from_struct_array
from_tuple = TensorDict.from_tuple
from tensordict import _functorch, _vmap

# ---- issue 29: 0.15.3's remaining small helpers and classes (docs/compatibility.md)
from tensordict import tensordict  # noqa: F401  (the old module path, as an attribute)
from tensordict._collate import collate, group_by, unpad_sequence
from tensordict._compat import _default_is_leaf as default_is_leaf
from tensordict._modes import get_defaults_to_none
from tensordict._pack import PackLayout
from tensordict._tensorcollection import TensorCollection
from tensordict.tensorclass import NonTensorDataBase, TensorAttrs
from tensordict.utils import (
    is_bool,
    is_floating,
    is_inexact,
    is_integer,
    parse_tensor_dict_string,
)

# ---- end of issue 29's block

register_nodes()  # TensorDict, LazyStackedTensorDict and tensorclasses as pytree nodes
_vmap.install()  # torch.vmap maps a tensordict along its batch dims, in one piece
_functorch.install()  # torch.func.functional_call takes a tensordict of parameters

__version__ = "0.1.0"

__all__ = [
    "get_printoptions",
    "set_printoptions",
    "from_any",
    "from_json",
    "from_namedtuple",
    "from_pandas",
    "from_parquet",
    "from_safetensors",
    "from_struct_array",
    "from_tuple",
    "to_safetensors",
    # tables and chunked arrays (issue 29)
    "from_arrow",
    "from_csv",
    "from_zarr",
    "to_arrow",
    # tensordicts on a Redis-compatible server (tensordict/store/)
    "LazyStackedTensorDictStore",
    "TensorDictStore",
    "KEY_SEPARATOR",
    "LazyStackedTensorDict",
    "NO_DEFAULT",
    "NestedKey",
    "TensorDict",
    "TensorDictBase",
    "cat",
    "stack",
    "from_consolidated",
    "from_dict",
    "from_pytree",
    "fromkeys",
    "is_tensor_collection",
    "make_tensordict",
    "unravel_key",
    "unravel_key_list",
    "unravel_key_to_tuple",
    "dense_stack_tds",
    "lazy_legacy",
    "lazy_stack",
    "maybe_dense_stack",
    "merge_tensordicts",
    "pad",
    "pad_sequence",
    "set_lazy_legacy",
    # global modes (tensordict/_modes.py)
    "capture_non_tensor_stack",
    "list_to_stack",
    "set_capture_non_tensor_stack",
    "set_get_defaults_to_none",
    "set_list_to_stack",
    "assert_allclose_td",
    "assert_close",
    "is_leaf_nontensor",
    # tensorclasses and non-tensor data (tensordict/tensorclass.py)
    "MetaData",
    "NonTensorData",
    "NonTensorStack",
    "TensorClass",
    "from_dataclass",
    "is_non_tensor",
    "is_tensorclass",
    "tensorclass",
    "TypedTensorDict",  # a class-annotated tensordict schema (tensordict/typedtensordict.py)
    "UnbatchedTensor",  # a leaf exempt from the batch-dim ops (tensordict/_unbatched.py)
    # data on disk (tensordict/memmap.py, tensordict/_persistence.py)
    "MemoryMappedTensor",
    "PersistentTensorDict",
    "from_h5",
    "load",
    "load_memmap",
    "memmap",
    "save",
    "append_memmap",
    "is_memmap_archive",
    "pack_memmap",
    "refresh_archive_checksums",
    "unpack_memmap",
    # parameters of nn.Modules as tensordicts (tensordict/_module_state.py, tensordict/nn)
    "TensorClassModuleBase",
    "TensorClassModuleWrapper",
    "TensorDictParams",
    "as_tensordict_module",
    "from_module",
    "from_modules",
    # issue 29: single-file archives are listed with the data on disk above; these
    # are 0.15.3's remaining helpers and classes
    "NonTensorDataBase",
    "PackLayout",
    "TensorAttrs",
    "TensorCollection",
    "collate",
    "default_is_leaf",
    "get_defaults_to_none",
    "group_by",
    "is_bool",
    "is_floating",
    "is_inexact",
    "is_integer",
    "parse_tensor_dict_string",
    "unpad_sequence",
]
