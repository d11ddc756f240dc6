"""How the names of the batch dims follow an op that moves, adds or removes batch dims.

A named dim keeps its name wherever the op moves it; a dim the op creates (unsqueeze,
stack, a new leading dim of expand, the merged dim of flatten) has none; a dim the op
removes (squeeze, unbind, a reduction) takes its name with it. These are 0.15.3's
rules, which code reading ``td.names`` after a shape op relies on. Each helper takes
the input's names (never None: the generated code skips the call when the input has
no names) and what the op's batch rule computed, dims already normalised.
"""

from __future__ import annotations

from typing import Sequence

Names = Sequence  # one name (a str or None) per batch dim


def first_names(tensordicts: Sequence, same: bool = False) -> Names | None:
    """stack, cat: the names of the first input, None when it has none; with
    ``same`` (stack, as 0.15.3), None unless every input has those names."""
    first = tensordicts[0]
    names = _names_of(first)
    if not names or all(name is None for name in names):
        return None
    if same:
        for td in tensordicts[1:]:
            other = _names_of(td)
            if other is None or list(other) != list(names):
                return None
    return names


def _names_of(td) -> Names | None:
    return getattr(td, "_names", None) if hasattr(td, "_names") else td.names


def same_size_names(names: Names, batch_size, new_batch_size) -> Names | None:
    """view/reshape: the names stay when the batch size does, and are dropped otherwise
    (which dims a reshape merges or splits has no answer in general)."""
    return names if tuple(new_batch_size) == tuple(batch_size) else None


def moved_names(names: Names, source: Sequence[int], destination: Sequence[int]) -> list:
    """movedim (and permute, transpose): the names go where their dims go."""
    out: list = [None] * len(names)
    for src, dst in zip(source, destination):
        out[dst] = names[src]
    rest = iter(name for i, name in enumerate(names) if i not in source)
    return [next(rest) if i not in destination else name for i, name in enumerate(out)]


def swapped_names(names: Names, dim0: int, dim1: int) -> list:
    """transpose: the two names swapped."""
    out = list(names)
    out[dim0], out[dim1] = out[dim1], out[dim0]
    return out


def rot90_names(names: Names, k: int, dims: Sequence[int]) -> Names:
    """rot90: an odd number of quarter turns swaps the two dims."""
    return swapped_names(names, *dims) if k % 2 else names


def dropped_names(names: Names, dims) -> list:
    """squeeze, unbind, a reduction over ``dims``: those dims' names go with them."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return [name for i, name in enumerate(names) if i not in dims]


def inserted_names(names: Names, dim: int) -> list:
    """unsqueeze, stack: the new dim at ``dim`` has no name."""
    return [*names[:dim], None, *names[dim:]]


def flattened_names(names: Names, start: int, end: int) -> list:
    """flatten: the merged dim has no name."""
    return [*names[:start], None, *names[end + 1 :]]


def unflattened_names(names: Names, dim: int, sizes: Sequence[int]) -> list:
    """unflatten: the last of the new dims keeps the name of ``dim``, the others have
    none (as 0.15.3 names them)."""
    return [*names[:dim], *([None] * (len(sizes) - 1)), *names[dim:]]


def leading_names(names: Names, new_batch_size) -> list:
    """expand: new leading dims have no name; the others keep theirs."""
    return [*([None] * (len(new_batch_size) - len(names))), *names]


def reduced_names(names: Names, dims, new_batch_size) -> list:
    """A reduction over ``dims``: the names of the dims kept stay (all of them with
    ``keepdim``); leading dims the result gains (quantile's) have none."""
    kept = names if len(new_batch_size) >= len(names) else dropped_names(names, dims)
    return [*([None] * (len(new_batch_size) - len(kept))), *kept]
