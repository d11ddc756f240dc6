"""How an op runs on a :class:`~tensordict.LazyStackedTensorDict`: the ways, their notes
in docstrings and on the reference page.

Each family's op type names its way (``lazy_way``); the ``lazy`` macro of its template
(``codegen/templates/families/<family>.jinja``; the generic ways are
``common.jinja``'s ``lazy_generic``) renders its form into
``tensordict/_generated/lazy_ops.py``:

- ``inherit``: leaf-wise ops that keep the batch size, the keys and the nesting: the
  ``TensorDict`` form, inherited, runs on the lazy stack's primitives (the members'
  leaves, one foreach call for all of them; the rebuild makes a lazy stack);
- ``rule``: batch-dim ops whose batch rule has a lazy counterpart in
  ``tensordict/_lazy_rules.py`` (dims translated around the stack dim, one op per
  member; where the op crosses the stack dim, the dense stack);
- ``reduce``: reductions and scans: per member over the other dims; over the stack
  dim, on the dense stack;
- ``each``: ops reading a key (``target``), run on each member as they are;
- ``lists``: collectors of nested lists along the batch dims (``tolist``): each member
  gives its lists, nested along the stack dim as the batch dims are;
- ``dense``: the rest: the op runs on the dense stack (``_dense_op``), and an in-place
  form writes the result back into the members;
- ``stacking``: ``stack`` / ``cat`` classmethods (``_lazy_rules.stack`` / ``cat``).
"""

from __future__ import annotations

from codegen import emit
from codegen.model import Op

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
    "lists": (
        "On a lazy stack each stacked tensordict gives its own lists, nested along\n"
        "the stack dim as the batch dims are (stacked tensordicts of different\n"
        "shapes are fine)."
    ),
    "dense": (
        "On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked\n"
        "tensordicts whose shapes differ raise an error naming the op."
    ),
    "stacking": (
        "Lazy stacks alike (one stack dim, as many tensordicts) stack into a lazy\n"
        "stack of their tensordicts stacked one by one; other inputs are stacked\n"
        "densely (lazily under ``set_lazy_legacy(True)``). ``cat`` along their stack\n"
        "dim joins their tensordicts without a copy."
    ),
}
# How the reference page names each way.
WAYS = {
    "inherit": "leaf-wise",
    "rule": "per member",
    "reduce": "reduction",
    "each": "each",
    "members": "per member",
    "lists": "per member",
    "dense": "dense",
    "stacking": "stacking",
}


def note_line(way: str) -> str:
    """The note of ``way`` on one line (for tables)."""
    return " ".join(NOTES[way].split())


def docstring(op: Op) -> str:
    return emit.docstring(op.summary, NOTES[op.lazy_way], f"See :meth:`TensorDict.{op.name}`.")
