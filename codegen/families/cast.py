"""cast: every leaf converted to one dtype (``spec/cast.yaml``); ``cast_filter`` picks
the leaves to convert."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Op, Role


@register
@dataclass(frozen=True, kw_only=True)
class CastOp(Op):
    family: ClassVar[str] = "cast"
    KEYS: ClassVar[frozenset] = frozenset({"leaf"})

    leaf: str  # "x.to(torch.float32)"

    @classmethod
    def parse(cls, entry: Entry) -> CastOp | None:
        parse.require(entry, "leaf")
        shared = parse.common(entry)
        sig = shared["signature"] if shared else None
        if sig is not None:
            if not sig.has("cast_filter") or sig.get("cast_filter").kind != "keyword_only":
                entry.err(entry.line_of("signature"),
                          "a cast signature takes the keyword-only parameter 'cast_filter'")
            else:
                shared["signature"] = sig.with_roles({"cast_filter": Role.CAST_FILTER})
        leaf = parse.leaf(entry, sig)
        if shared is None or leaf is None or entry.failed:
            return None
        return cls(**shared, leaf=leaf)

