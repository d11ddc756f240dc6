"""How an op runs on a :class:`~tensordict.LazyStackedTensorDict`: the ways, and the
emitters of the lazy forms every family can use.

Each family's op type names its way (``lazy_way``) and renders its lazy form
(``lazy_code``), rendered into ``tensordict/_generated/lazy_ops.py``:

- ``inherit``: leaf-wise ops that keep the batch size, the keys and the nesting: the
  ``TensorDict`` form, inherited, runs on the lazy stack's primitives (the members'
  leaves, one foreach call for all of them; the rebuild makes a lazy stack);
- ``rule``: batch-dim ops whose batch rule has a lazy counterpart in
  ``tensordict/_lazy_rules.py`` (dims translated around the stack dim, one op per
  member; where the op crosses the stack dim, the dense stack);
- ``reduce``: reductions and scans: per member over the other dims; over the stack
  dim, on the dense stack;
- ``each``: ops reading a key (``target``), run on each member as they are;
- ``dense``: the rest: the op runs on the dense stack (``_dense_op``), and an in-place
  form writes the result back into the members;
- ``stacking``: ``stack`` / ``cat`` classmethods (``_lazy_rules.stack`` / ``cat``).
"""

from __future__ import annotations

from codegen import emit
from codegen.model import Op, Role

NOTES = {
    "inherit": (
        "On a lazy stack it runs on the stacked tensordicts' leaves (one call over\n"
        "all of them) and returns a lazy stack."
    ),
    "rule": (
        "On a lazy stack the dims are translated around the stack dim and the op\n"
        "runs on each stacked tensordict, giving a lazy stack; where it crosses the\n"
        "stack dim it runs on the dense stack."
    ),
    "reduce": (
        "On a lazy stack it reduces each stacked tensordict over the other dims (a\n"
        "lazy stack); over the stack dim it runs on the dense stack."
    ),
    "each": "On a lazy stack it runs on each stacked tensordict.",
    "members": (
        "On a lazy stack it runs on each stacked tensordict, its batch-shaped\n"
        "arguments cut along the stack dim (stacked tensordicts of different shapes\n"
        "are fine), and returns a lazy stack (or ``out``)."
    ),
    "dense": (
        "On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked\n"
        "tensordicts whose shapes differ raise an error naming the op."
    ),
    "stacking": (
        "Lazy stacks are stacked densely (lazily under ``set_lazy_legacy(True)``);\n"
        "``cat`` along their stack dim joins their tensordicts without a copy."
    ),
}
# How the reference page names each way.
WAYS = {
    "inherit": "leaf-wise",
    "rule": "per member",
    "reduce": "reduction",
    "each": "each",
    "members": "per member",
    "dense": "dense",
    "stacking": "stacking",
}


def note_line(way: str) -> str:
    """The note of ``way`` on one line (for tables)."""
    return " ".join(NOTES[way].split())


def docstring(op: Op) -> str:
    return emit.docstring(op.summary, NOTES[op.lazy_way], f"See :meth:`TensorDict.{op.name}`.")


def method(op: Op, body: str, decorators: tuple[str, ...] = ()) -> str:
    """The lazy form of ``op`` (and the write-back of its in-place variant)."""
    code = emit.function(op.name, op.signature.text, docstring(op), body, decorators)
    if op.inplace is not None:
        code += "\n\n" + write_back(op)
    return code


def dense(op: Op) -> str:
    """``way: dense``: the op on the dense stack."""
    body = []
    inplace = op.signature.role(Role.INPLACE)
    if inplace is not None:
        body.append(f'if {inplace.name}:\n    raise _lazy_rules.not_in_place(self, "{op.name}")')
    elif op.inplace_name is not None:  # read from **kwargs by the op's rule
        kwargs = next(p.name for p in op.signature.params if p.kind == "var_keyword")
        body.append(f'if {kwargs}.get("inplace"):\n    raise _lazy_rules.not_in_place(self, "{op.name}")')
    body.append(emit.result(op, f'self._dense_op("{op.name}").{op.name}({op.signature.forward_args()})',
                            may_return_out=True))
    return method(op, "\n".join(body))


def members(op: Op) -> str:
    """``way: members``: the op on every member, its batch-shaped arguments (tensors,
    tensordicts, ``out``) cut along the stack dim (``_lazy_rules.on_members``)."""
    def call(name: str, sig) -> str:
        kwargs = ", ".join(f"{p.name}={p.name}" for p in sig.params)
        return f'_lazy_rules.on_members(self, "{name}", dict({kwargs}))'
    body = emit.result(op, call(op.name, op.signature), may_return_out=True)
    code = emit.function(op.name, op.signature.text, docstring(op), body)
    if op.inplace is not None:
        ip = op.inplace
        doc = emit.docstring(
            f"In-place :meth:`{op.name}`, returning ``self``.",
            "On a lazy stack it runs on each stacked tensordict.",
        )
        code += "\n\n" + emit.function(ip.name, ip.signature.text, doc, f"{call(ip.name, ip.signature)}\nreturn self")
    return code


def each(op: Op) -> str:
    """``way: each``: the op on every member, as it is."""
    args = op.signature.forward_args()
    return method(op, f"for td in self.tensordicts:\n    td.{op.name}({args})\nreturn self")


def write_back(op: Op) -> str:
    """An in-place variant: on the dense stack, the result written into the members."""
    ip = op.inplace
    doc = emit.docstring(
        f"In-place :meth:`{op.name}`, returning ``self``.",
        "On a lazy stack it runs on the dense stack and writes the result back into\nthe stacked tensordicts.",
    )
    body = (
        f'dense = self._dense_op("{ip.name}")\n'
        f"dense.{ip.name}({ip.signature.forward_args()})\n"
        "return self._write_back(dense)"
    )
    return emit.function(ip.name, ip.signature.text, doc, body)


def code_for(op: Op) -> str | None:
    """The lazy form of the generic ways (``inherit``: none, ``dense``, ``each``)."""
    if op.lazy_way == "inherit":
        return None
    if op.lazy_way == "dense":
        return dense(op)
    if op.lazy_way == "each":
        return each(op)
    if op.lazy_way == "members":
        return members(op)
    raise ValueError(f"{op.name}: way {op.lazy_way!r} needs the family's own lazy_code")
