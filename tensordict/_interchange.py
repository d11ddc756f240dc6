"""Tables and files that other libraries read and write: JSON records, pandas
DataFrames, parquet files (pyarrow) and safetensors files.

A tensordict with one batch dim is a table: one row per index, one column per entry
(nested keys joined with ``separator``). pandas, pyarrow and safetensors are optional:
each is imported when a call needs it, and its absence is an ``ImportError`` naming the
extra to install (``pip install "tensordict[pandas]"``, ``[parquet]``,
``[safetensors]``). ``TensorDictBase`` inherits :class:`InterchangeMethods`; the module
functions (``from_json``, ``from_pandas``, ``from_parquet``, ``from_safetensors``,
``to_safetensors``) are exported by ``tensordict``. Files are written to a temporary
name and renamed into place: a failed write leaves the old file, never a torn one.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import Tensor

from tensordict import _mds
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection

# module -> the extra of pyproject.toml that installs it
_EXTRAS = {"pandas": "pandas", "pyarrow": "parquet", "safetensors": "safetensors"}


def require(module: str, what: str, extra: str | None = None) -> Any:
    """Import an optional dependency, or say which extra installs it (``extra``, else
    the one ``_EXTRAS`` names)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = extra or _EXTRAS[module]
        raise ImportError(
            f"{what} needs the optional package {module!r}, which is not installed: "
            f'pip install "tensordict[{extra}]" (or pip install {module})'
        ) from None


def write_atomically(path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` and rename ``tmp`` to ``path``: readers see the old file
    or the new one, never a partial one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# ---------------------------------------------------------------------------- columns


def _is_nested(value) -> bool:
    return isinstance(value, TensorCollection) and not value._is_non_tensor


def _rows_of(value, n: int, key) -> list:
    """A non-tensor entry of a table as one value per row."""
    if isinstance(value, TensorCollection):  # NonTensorData / NonTensorStack
        rows = value.tolist()
    elif isinstance(value, np.ndarray) and value.ndim and value.shape[0] == n:
        rows = value.tolist()
    else:
        rows = [value] * n
    if len(rows) != n:
        raise ValueError(f"entry {key!r} holds {len(rows)} values for {n} rows")
    return rows


def _table(td, separator: str | None, what: str) -> tuple[int, dict]:
    """``(rows, {column name: tensor or list of row values})`` of a tensordict with
    one batch dim; nested tensordicts need ``separator``."""
    if td.batch_dims != 1:
        raise ValueError(
            f"{what} writes one row per index of a tensordict with one batch dim; this "
            f"one has batch_size {tuple(td.batch_size)}: reshape(-1) it first"
        )
    td = td._with_dense_stacks(what)
    if separator is not None:
        td = td.flatten_keys(separator)
    n = td.batch_size[0]
    columns: dict = {}
    for key, value in td._own_items():
        if _is_nested(value):
            raise ValueError(
                f"{what}: the entry {key!r} is a nested tensordict; pass "
                f"separator='.' to write its entries as columns named '{key}.<name>'"
            )
        columns[key] = value if isinstance(value, Tensor) else _rows_of(value, n, key)
    return n, columns


def _column_entry(values: list, key, dtype):
    """A column read back: a tensor where the values are numbers (or rectangular lists
    of numbers), else a ``NonTensorStack`` of the values."""
    if values and all(
        isinstance(v, (bool, int, float, list)) and v is not None for v in values
    ):
        try:
            tensor = torch.tensor(values)
        except (TypeError, ValueError):
            pass
        else:
            return tensor if dtype is None else tensor.to(dtype)
    return container_class("NonTensorStack").from_list(list(values))


def _from_columns(columns: dict, n: int, separator, dtype) -> Any:
    """A tensordict with batch size ``[n]`` of ``{name: column}``."""
    data = {}
    for key, column in columns.items():
        if isinstance(column, dict):  # a nested object of each row
            data[key] = _from_columns(column, n, None, dtype)
        elif isinstance(column, Tensor):
            data[key] = column if dtype is None else column.to(dtype)
        else:
            data[key] = _column_entry(column, key, dtype)
    td = container_class("TensorDict")(data, batch_size=[n])
    return td if separator is None else td.unflatten_keys(separator)


def _check_batch_args(what: str, auto_batch_size, batch_size) -> None:
    if auto_batch_size and batch_size is not None:
        raise TypeError(
            f"Conflicting batch sizes in {what}: batch_size and auto_batch_size cannot "
            f"be both specified (batch_size sets it, auto_batch_size infers it)"
        )


def _batched(td, auto_batch_size, batch_dims, device, batch_size):
    """The batch size and device a ``from_*`` call asks for."""
    if batch_size is not None:
        td.batch_size = batch_size
    elif auto_batch_size or batch_dims is not None:
        td.auto_batch_size_(batch_dims)
    if device is not None:
        td = td.to(device)
    return td


# ------------------------------------------------------------------------------- json


def _json_object(td, separator) -> dict:
    out = {}
    for key, value in td._own_items():
        if _is_nested(value):
            out[key] = _json_object(value, None)
        elif isinstance(value, Tensor):
            out[key] = value.tolist()
        elif isinstance(value, TensorCollection):
            out[key] = value.tolist()
        else:
            out[key] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


def _to_json_text(td, separator, lines) -> str:
    if separator is not None:
        td = td.flatten_keys(separator)
    elif td.batch_dims == 1:
        # nested tensordicts become nested objects of each row
        td = td._with_dense_stacks("to_json")
    if td.batch_dims > 1:
        raise ValueError(
            f"to_json writes a tensordict with at most one batch dim (one record per "
            f"row); this one has batch_size {tuple(td.batch_size)}: reshape(-1) it first"
        )
    rows = _json_rows_nested(td) if td.batch_dims == 1 else _json_object(td, None)
    try:
        if lines:
            if td.batch_dims != 1:
                raise ValueError(
                    "to_json(lines=True) writes one line per row of a tensordict with "
                    f"one batch dim; this one has batch_size {tuple(td.batch_size)}"
                )
            return "".join(json.dumps(row) + "\n" for row in rows)
        return json.dumps(rows)
    except TypeError as err:
        raise TypeError(
            f"to_json: a non-tensor value cannot be written as JSON ({err}); JSON "
            f"holds str, int, float, bool, None, lists and dicts"
        ) from None


def _json_rows_nested(td) -> list:
    """One JSON object per row; nested tensordicts are nested objects."""
    n = td.batch_size[0]
    rows: list[dict] = [{} for _ in range(n)]
    for key, value in td._own_items():
        if _is_nested(value):
            values = _json_rows_nested(value._with_dense_stacks("to_json"))
        elif isinstance(value, Tensor):
            values = value.tolist()
        else:
            values = _rows_of(value, n, key)
        for row, item in zip(rows, values):
            row[key] = item
    return rows


def _columns_of_records(records: list, where: str) -> dict:
    """``{key: [value of each row]}``, nested objects as nested column dicts."""
    first = records[0]
    if not isinstance(first, dict):
        raise ValueError(
            f"from_json expects an object or a list of objects (one per row); {where} "
            f"holds a {type(first).__name__}"
        )
    columns: dict = {}
    for key in first:
        values = []
        for i, row in enumerate(records):
            if not isinstance(row, dict) or key not in row:
                raise ValueError(
                    f"from_json: row {i} has no key {key!r}, which row 0 has; every "
                    f"row must have the same keys"
                )
            values.append(row[key])
        if isinstance(values[0], dict):
            columns[key] = _columns_of_records(values, f"the key {key!r}")
        else:
            columns[key] = values
    return columns


def _from_json_object(obj: dict, dtype) -> Any:
    data = {}
    for key, value in obj.items():
        if isinstance(value, dict):
            data[key] = _from_json_object(value, dtype)
        elif isinstance(value, (bool, int, float, list)):
            tensor = torch.tensor(value)
            data[key] = tensor if dtype is None else tensor.to(dtype)
        else:
            data[key] = value
    return container_class("TensorDict")(data)


def from_json(
    path,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    separator: str | None = None,
    dtype: torch.dtype | None = None,
    lines: bool = False,
):
    """Read what :meth:`~TensorDictBase.to_json` writes: a list of records (one per
    row: batch size ``[rows]``), a single object (batch size ``[]``), or with
    ``lines=True`` one record per line. ``path`` is a path or an open text file.
    Numbers and rectangular lists of numbers become tensors (``dtype`` casts them),
    other values a ``NonTensorStack``; ``separator`` splits flattened keys.

    >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
    >>> td.to_json("data.json")
    >>> from_json("data.json")["a"]
    tensor([0, 1, 2])
    """
    if hasattr(path, "read"):
        text = path.read()
    else:
        text = Path(path).read_text()
    if lines:
        data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        data = json.loads(text)
    if isinstance(data, dict):
        td = _from_json_object(data, dtype)
        if separator is not None:
            td = td.unflatten_keys(separator)
        return _batched(td, auto_batch_size, batch_dims, device, batch_size)
    if not isinstance(data, list):
        raise ValueError(
            f"from_json expects an object or a list of objects (one per row), found "
            f"a {type(data).__name__}"
        )
    if not data:
        return _batched(
            container_class("TensorDict")({}, [0]),
            auto_batch_size,
            batch_dims,
            device,
            batch_size,
        )
    td = _from_columns(
        _columns_of_records(data, "the list"), len(data), separator, dtype
    )
    return _batched(td, auto_batch_size, batch_dims, device, batch_size)


# ----------------------------------------------------------------------------- pandas


def from_pandas(
    dataframe,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    separator: str | None = None,
    dtype: torch.dtype | None = None,
):
    """A tensordict with one row per row of ``dataframe`` (batch size ``[rows]``):
    numeric and boolean columns become tensors (``dtype`` casts them), other columns
    a ``NonTensorStack`` of their values; ``separator`` splits column names into
    nested keys.

    >>> import pandas as pd
    >>> td = from_pandas(pd.DataFrame({"x": [1.0, 2.0], "y": [3, 4]}))
    >>> td.batch_size, td["y"].tolist()
    (torch.Size([2]), [3, 4])
    """
    pd = require("pandas", "from_pandas")
    _check_batch_args("from_pandas", auto_batch_size, batch_size)
    columns: dict = {}
    for name in dataframe.columns:
        series = dataframe[name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            # a categorical column is its integer codes (the categories are its dtype)
            series = series.cat.codes
        kind = series.dtype.kind if isinstance(series.dtype, np.dtype) else "O"
        if kind in "biuf":
            columns[str(name)] = torch.from_numpy(series.to_numpy().copy())
        else:
            columns[str(name)] = series.tolist()
    td = _from_columns(columns, len(dataframe), separator, dtype)
    return _batched(td, auto_batch_size, batch_dims, device, batch_size)


# -------------------------------------------------------------------------------- csv


def from_csv(
    path,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    separator: str | None = None,
    dtype: torch.dtype | None = None,
    **kwargs,
):
    """Read a CSV file with a header row: one entry per column, batch size ``[rows]``.
    Read with ``pandas.read_csv`` (``kwargs`` go to it) where pandas is installed,
    else with ``pyarrow.csv.read_csv``; the columns convert as in
    :func:`from_pandas`: numbers and booleans become tensors (``dtype`` casts them),
    other columns a ``NonTensorStack`` of one value per row; ``separator`` splits
    column names into nested keys (``"obs.x"`` -> ``("obs", "x")``).

    >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_csv("rows.csv")
    >>> from_csv("rows.csv")["x"].tolist()
    [0, 1, 2]
    """
    _check_batch_args("from_csv", auto_batch_size, batch_size)
    try:
        importlib.import_module("pandas")
    except ImportError:
        pass
    else:
        import pandas

        frame = pandas.read_csv(path, **kwargs)
        return from_pandas(
            frame,
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
            device=device,
            batch_size=batch_size,
            separator=separator,
            dtype=dtype,
        )
    try:
        importlib.import_module("pyarrow")
    except ImportError:
        raise ImportError(
            "from_csv needs pandas or pyarrow, optional packages of which neither is "
            'installed: pip install "tensordict[pandas]" (or pip install pandas)'
        ) from None
    import pyarrow as pa
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(path, **kwargs)
    data = {name: _arrow_column(pa, table.column(name)) for name in table.column_names}
    td = _from_columns(data, table.num_rows, separator, dtype)
    return _batched(td, auto_batch_size, batch_dims, device, batch_size)


# ---------------------------------------------------------------------------- parquet


def _arrow_array(pa, column, key):
    """A pyarrow array of one value per row; feature dims become fixed-size lists."""
    if not isinstance(column, Tensor):
        return pa.array(column)
    if column.dtype is torch.bfloat16 or column.is_complex():
        raise TypeError(
            f"to_parquet: the entry {key!r} has dtype {column.dtype}, which parquet "
            f"cannot hold; cast it (td.float()) first"
        )
    array = column.detach().cpu().contiguous()
    values = pa.array(array.reshape(-1).numpy())
    for size in reversed(array.shape[1:]):
        values = pa.FixedSizeListArray.from_arrays(values, size)
    return values


def _arrow_column(pa, column) -> Any:
    """A parquet column read back: a tensor for numbers (fixed-size lists give the
    feature dims), else the list of its values."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    shape = []
    values = column
    while pa.types.is_fixed_size_list(values.type):
        shape.append(values.type.list_size)
        values = values.flatten()
    kind = values.type
    if (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
    ):
        if values.null_count == 0:
            numpy = values.to_numpy(zero_copy_only=False)
            return torch.from_numpy(np.array(numpy)).reshape(len(column), *shape)
    return column.to_pylist()


def _as_class(cls, td):
    """``td`` as ``cls.from_*`` returns it: an instance of a tensorclass ``cls``."""
    if getattr(cls, "_is_tensorclass", False):
        return cls.from_tensordict(td)
    return td


class InterchangeMethods:
    """See the module docstring."""

    __slots__ = ()

    def to_json(
        self, path=None, *, separator: str | None = None, lines: bool = False
    ) -> str | None:
        """Write the rows as JSON records (one object per row of a tensordict with one
        batch dim; a single object for batch size ``[]``). Tensors with feature dims
        are lists; nested tensordicts are nested objects, or flat keys joined with
        ``separator``; ``lines=True`` writes one record per line. Returns the text
        when ``path`` is ``None``.

        >>> td = TensorDict(a=torch.arange(2), batch_size=[2])
        >>> td.to_json("rows.json")
        >>> TensorDict.from_json("rows.json")["a"].tolist()
        [0, 1]
        """
        text = _to_json_text(self, separator, lines)
        if path is None:
            return text
        if hasattr(path, "write"):
            path.write(text)
            return None
        write_atomically(path, lambda tmp: tmp.write_text(text))
        return None

    @classmethod
    def from_json(cls, path, **kwargs):
        """See :func:`tensordict.from_json` (a tensorclass gives an instance of
        itself).

        >>> TensorDict(a=torch.arange(2), batch_size=[2]).to_json("rows.json")
        >>> TensorDict.from_json("rows.json")["a"].tolist()
        [0, 1]
        """
        return _as_class(cls, from_json(path, **kwargs))

    def to_pandas(self, *, separator: str | None = None):
        """A ``pandas.DataFrame`` with one row per index of a tensordict with one
        batch dim; each entry (nested ones with ``separator``) must hold one value
        per row.

        >>> df = TensorDict(x=torch.arange(3), batch_size=[3]).to_pandas()
        >>> list(df["x"])
        [0, 1, 2]
        """
        pd = require("pandas", "to_pandas")
        n, columns = _table(self, separator, "to_pandas")
        frame = {}
        for key, column in columns.items():
            if isinstance(column, Tensor):
                if column.ndim != 1:
                    raise ValueError(
                        f"Cannot convert tensor at key {key!r} (shape "
                        f"{tuple(column.shape)}) to a single DataFrame column: "
                        f"a DataFrame column holds one value per row (shape ({n},)); "
                        f"to_parquet keeps feature dims"
                    )
                column = column.detach().cpu().numpy()
            frame[key] = column
        return pd.DataFrame(frame, index=range(n))

    @classmethod
    def from_pandas(cls, dataframe, **kwargs):
        """See :func:`tensordict.from_pandas` (a tensorclass gives an instance of
        itself).

        >>> import pandas as pd
        >>> TensorDict.from_pandas(pd.DataFrame({"x": [1, 2]}))["x"].tolist()
        [1, 2]
        """
        return _as_class(cls, from_pandas(dataframe, **kwargs))

    def to_csv(self, path, *, separator: str | None = None, **kwargs) -> None:
        """Write a CSV file with one row per index of a tensordict with one batch dim
        and one column per entry, as :meth:`to_pandas` lays them out (nested keys
        joined with ``separator``; an entry with feature dims is an error), through
        ``pandas.DataFrame.to_csv`` without the index (``kwargs`` go to it).
        :func:`tensordict.from_csv` reads it back.

        >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_csv("rows.csv")
        >>> TensorDict.from_csv("rows.csv")["x"].tolist()
        [0, 1, 2]
        """
        frame = self.to_pandas(separator=separator)
        kwargs.setdefault("index", False)
        if hasattr(path, "write"):
            frame.to_csv(path, **kwargs)
            return None
        write_atomically(path, lambda tmp: frame.to_csv(tmp, **kwargs))
        return None

    @classmethod
    def from_csv(cls, path, **kwargs):
        """See :func:`tensordict.from_csv` (a tensorclass gives an instance of
        itself).

        >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_csv("rows.csv")
        >>> TensorDict.from_csv("rows.csv").batch_size
        torch.Size([3])
        """
        return _as_class(cls, from_csv(path, **kwargs))

    def to_mds(
        self,
        *,
        columns: dict | None = None,
        out,
        keep_local: bool = False,
        compression: str | None = None,
        hashes: list | None = None,
        size_limit: int | str | None = 1 << 26,
        writer=None,
        finish_writer: bool | None = None,
        **kwargs,
    ) -> None:
        """Write a MosaicML Streaming (MDS) dataset: one sample per index of the first
        batch dim (one for no batch dims), tensors as numpy arrays (0-d ones as
        numbers). ``columns`` gives the MDS encodings (inferred from the first sample
        otherwise); ``out``, ``keep_local``, ``compression``, ``hashes``,
        ``size_limit`` and ``kwargs`` go to ``streaming.MDSWriter``. A ``writer``
        passed in is used instead, and finished after writing if ``finish_writer``
        (default: finished, with a ``FutureWarning``, for a tensordict with batch dims;
        left open otherwise). Needs ``pip install mosaicml-streaming`` unless a writer
        is passed; see ``tensordict/_mds.py``.

        Without ``writer=``, it needs ``mosaicml-streaming`` (its ``MDSWriter``); any object with
        a ``write(sample)`` method stands in for it:

        >>> class Rows:
        ...     def __init__(self):
        ...         self.samples = []
        ...     def write(self, sample):
        ...         self.samples.append(sample)
        >>> rows = Rows()
        >>> TensorDict(x=torch.arange(2), batch_size=[2]).to_mds(out="mds", writer=rows, finish_writer=False)
        >>> rows.samples
        [{'x': 0}, {'x': 1}]
        """
        _mds.to_mds(
            self,
            columns=columns,
            out=out,
            keep_local=keep_local,
            compression=compression,
            hashes=hashes,
            size_limit=size_limit,
            writer=writer,
            finish_writer=finish_writer,
            **kwargs,
        )

    def to_parquet(self, path, *, separator: str | None = None, **kwargs) -> None:
        """Write a parquet file with one row per index of a tensordict with one batch
        dim (pyarrow); feature dims are kept as fixed-size lists. ``kwargs`` go to
        ``pyarrow.parquet.write_table``.

        >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_parquet("rows.parquet")
        >>> TensorDict.from_parquet("rows.parquet").batch_size
        torch.Size([3])
        """
        pa = require("pyarrow", "to_parquet")
        import pyarrow.parquet as pq

        _, columns = _table(self, separator, "to_parquet")
        table = pa.table(
            {key: _arrow_array(pa, col, key) for key, col in columns.items()}
        )
        write_atomically(path, lambda tmp: pq.write_table(table, tmp, **kwargs))

    @classmethod
    def from_parquet(cls, path, **kwargs):
        """See :func:`tensordict.from_parquet` (a tensorclass gives an instance of
        itself).

        >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_parquet("rows.parquet")
        >>> TensorDict.from_parquet("rows.parquet")["x"].tolist()
        [0, 1, 2]
        """
        return _as_class(cls, from_parquet(path, **kwargs))


def from_parquet(
    path,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    separator: str | None = None,
    dtype: torch.dtype | None = None,
    columns: list[str] | None = None,
    **kwargs,
):
    """Read a parquet file (pyarrow): one row per row of the file (batch size
    ``[rows]``); ``columns`` selects columns by their names in the file and
    ``kwargs`` go to ``pyarrow.parquet.read_table``.

    >>> TensorDict(x=torch.arange(3), batch_size=[3]).to_parquet("rows.parquet")
    >>> from_parquet("rows.parquet")["x"].tolist()
    [0, 1, 2]
    """
    pa = require("pyarrow", "from_parquet")
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=columns, **kwargs)
    data = {name: _arrow_column(pa, table.column(name)) for name in table.column_names}
    td = _from_columns(data, table.num_rows, separator, dtype)
    return _batched(td, auto_batch_size, batch_dims, device, batch_size)


# ------------------------------------------------------------------------ safetensors
# The file's metadata holds, under "tensordict", one JSON string describing the tree
# (the layout 0.15.3 writes, so that files go both ways): {"version": 1, "root": node}
# where a node is {"batch_size", "names", "keys": {key: entry}} plus "class" for a
# tensorclass and "stack_dim" for a lazy stack (saved as its dense stack), and an entry
# is {"tensor": name in the file}, {"td": node} or {"non_tensor": JSON value}.

_JSON_TYPES = (str, int, float, bool, type(None), list, dict)


def _describe(td, prefix: str, tensors: dict) -> dict:
    node: dict = {"batch_size": list(td.batch_size), "names": None}
    names = list(td.names) if td.batch_dims else []
    if any(name is not None for name in names):
        node["names"] = names
    if getattr(type(td), "_is_tensorclass", False):
        node["class"] = str(type(td))
        td = td._tensordict
    if isinstance(td, container_class("LazyStackedTensorDict")):
        node["stack_dim"] = td.stack_dim
        td = td._with_dense_stacks("to_safetensors")
    keys: dict = {}
    for key, value in td._own_items():
        name = f"{prefix}{key}"
        if isinstance(value, Tensor):
            if name in tensors:
                raise ValueError(
                    f"to_safetensors: two entries are both named {name!r} once their "
                    f"keys are joined with '.'; rename one of them"
                )
            if value.is_nested or value.is_sparse:
                raise TypeError(
                    f"to_safetensors: the entry {name!r} is a nested or sparse tensor, "
                    f"which safetensors cannot hold"
                )
            tensors[name] = value.detach().cpu().contiguous()
            keys[key] = {"tensor": name}
        elif _is_nested(value):
            keys[key] = {"td": _describe(value, name + ".", tensors)}
        elif isinstance(value, TensorCollection) or not _json_value(value):
            raise TypeError(
                f"to_safetensors: the entry {name!r} holds a {type(value).__name__}; "
                f"safetensors files keep tensors and JSON values (str, int, float, "
                f"bool, None, list, dict) only"
            )
        else:
            keys[key] = {"non_tensor": value}
    node["keys"] = keys
    return node


def _json_value(value) -> bool:
    if isinstance(value, (list, dict)):
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            return False
        return True
    return isinstance(value, _JSON_TYPES)


def to_safetensors(data, path) -> None:
    """Save a tensordict or tensorclass to a safetensors file: tensors under their
    keys joined with ``"."`` (a model's ``state_dict`` names), the structure (batch
    sizes, names, tensorclasses, lazy stacks, JSON non-tensor values) in the file's
    metadata, so that :func:`from_safetensors` rebuilds it.

    >>> to_safetensors(TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.ones(2))), "w.safetensors")
    >>> from_safetensors("w.safetensors")["sub", "b"].tolist()
    [1.0, 1.0]
    """
    require("safetensors", "to_safetensors")
    from safetensors.torch import save_file

    tensors: dict = {}
    tree = {"version": 1, "root": _describe(data, "", tensors)}
    metadata = {"tensordict": json.dumps(tree)}
    write_atomically(path, lambda tmp: save_file(tensors, str(tmp), metadata=metadata))


def _find_class(text: str) -> type:
    """The tensorclass named ``"<class 'module.Name'>"``, from a module already
    imported (a file never makes us import a module)."""
    name = text.removeprefix("<class '").removesuffix("'>")
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        obj: Any = module
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        if isinstance(obj, type) and getattr(obj, "_is_tensorclass", False):
            return obj
    raise ValueError(
        f"from_safetensors: the file holds a {name}, a tensorclass whose module is "
        f"not imported; import the module that defines it first (tensordict never "
        f"imports a module named in a file)"
    )


def _rebuild(node: dict, tensors: dict, device) -> Any:
    data = {}
    for key, entry in node["keys"].items():
        if "tensor" in entry:
            data[key] = tensors[entry["tensor"]]
        elif "td" in entry:
            data[key] = _rebuild(entry["td"], tensors, device)
        else:
            data[key] = entry["non_tensor"]
    td = container_class("TensorDict")(
        data, batch_size=node["batch_size"], device=device, names=node.get("names")
    )
    if "stack_dim" in node:
        dim = node["stack_dim"]
        td = container_class("LazyStackedTensorDict")(*td.unbind(dim), stack_dim=dim)
    if "class" in node:
        td = _find_class(node["class"]).from_tensordict(td)
    return td


def from_safetensors(path, *, device=None):
    """Load a safetensors file. A file written by :func:`to_safetensors` (or by
    0.15.3) comes back with its structure; any other file (a model checkpoint) is a
    nested ``TensorDict`` with batch size ``[]``, each name split on ``"."``.

    >>> to_safetensors(TensorDict(a=torch.arange(2)), "w.safetensors")
    >>> from_safetensors("w.safetensors")["a"].tolist()
    [0, 1]
    """
    require("safetensors", "from_safetensors")
    from safetensors import safe_open

    target = "cpu" if device is None else str(torch.device(device))
    tensors = {}
    with safe_open(str(path), framework="pt", device=target) as f:
        metadata = f.metadata() or {}
        for name in f.keys():
            tensors[name] = f.get_tensor(name)
    if "tensordict" in metadata:
        tree = json.loads(metadata["tensordict"])
        return _rebuild(tree["root"], tensors, device)
    td = container_class("TensorDict")(
        {tuple(name.split(".")): tensor for name, tensor in tensors.items()},
        device=device,
    )
    return td
