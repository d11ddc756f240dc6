"""indexing: split, chunk, tensor_split, unbind, gather, the masked ops, where
(``spec/indexing.yaml``). The shared leaf-wise machinery is ``codegen/leafwise.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import leafwise
from codegen.entry import Entry
from codegen.families import register


@register
@dataclass(frozen=True, kw_only=True)
class IndexingOp(leafwise.LeafwiseOp):
    family: ClassVar[str] = "indexing"
    KEYS: ClassVar[frozenset] = leafwise.KEYS

    @classmethod
    def parse(cls, entry: Entry) -> IndexingOp | None:
        fields = cls.parse_leafwise(entry)
        return None if fields is None else cls(**fields)
