"""What the containers whose data lives outside this process's memory (an HDF5 or zarr
file: ``PersistentTensorDict``; a Redis server: ``TensorDictStore``) do alike: an op's
result is a :class:`~tensordict.TensorDict` in RAM, and the calls that need the data in
RAM (pinning, a dense copy) are answered from ``self._to_ram()``, which each defines.
"""

from __future__ import annotations

from tensordict import _errors
from tensordict._td import TensorDict, _parse_batch_size, _parse_device
from tensordict.base import NO_DEFAULT, _parse_names


class OutsideRam:
    """Mixed in before ``TensorDictBase``; ``_RESTRUCTURE_HINT`` ends the error of an
    in-place op that would change the keys or the batch size."""

    __slots__ = ()
    _RESTRUCTURE_HINT = "use the out-of-place op, whose result is in RAM"

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        # results of ops live in RAM
        bs = self._batch_size if batch_size is None else _parse_batch_size(batch_size)
        device = self._device if device is NO_DEFAULT else _parse_device(device)
        names = (
            (self._names if batch_size is None else None)
            if names is NO_DEFAULT
            else _parse_names(names, len(bs))
        )
        return TensorDict._from_storage({}, bs, device, names)

    def _replace_contents(self, other) -> None:
        raise RuntimeError(
            f"a {type(self).__name__} cannot be restructured in place (inplace=True "
            f"ops that change its keys or batch size); {self._RESTRUCTURE_HINT}"
        )

    def _refuse_restructure(self, op: str):
        # 0.15.3's phrases first (code matches them)
        if op == "select":
            lead = f"Cannot call select on a {type(self).__name__}. Call to_tensordict() first."
        else:
            lead = f"Cannot call {op} in_place with a {type(self).__name__}."
        raise _errors.OutsideRamInPlaceError(
            f"{lead} ({op}(inplace=True) would restructure it in place; "
            f"{self._RESTRUCTURE_HINT})"
        )

    def select(self, *keys, inplace: bool = False, **kwargs):
        """As :meth:`TensorDict.select`; the result is in RAM (``inplace=True`` is
        refused: it would restructure the stored data)."""
        if inplace:
            self._refuse_restructure("select")
        return super().select(*keys, **kwargs)

    def flatten_keys(self, separator: str = ".", inplace: bool = False, is_leaf=None):
        """As :meth:`TensorDict.flatten_keys`; the result is in RAM (``inplace=True``
        is refused: it would restructure the stored data)."""
        if inplace:
            self._refuse_restructure("flatten_keys")
        return super().flatten_keys(separator, is_leaf=is_leaf)

    def unflatten_keys(self, separator: str = ".", inplace: bool = False):
        """As :meth:`TensorDict.unflatten_keys`; the result is in RAM
        (``inplace=True`` is refused: it would restructure the stored data)."""
        if inplace:
            self._refuse_restructure("unflatten_keys")
        return super().unflatten_keys(separator)

    def pin_memory(self, *args, **kwargs):
        """Refused, as in 0.15.3: pin ``to_tensordict()``, a copy this one does not
        write through to."""
        raise _errors.cannot_pin(self)

    def pin_memory_(self, *args, **kwargs):
        """Refused, as :meth:`pin_memory`."""
        raise _errors.cannot_pin(self)

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """The content as a :class:`TensorDict` in RAM."""
        return self._to_ram()

    def copy(self) -> TensorDict:
        return self._to_ram()
