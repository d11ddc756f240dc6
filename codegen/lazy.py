"""How each spec entry runs on a :class:`~tensordict.LazyStackedTensorDict`.

``codegen/templates/lazy_ops.py.jinja`` renders the lazy form of every op from the same
spec entries as the ``TensorDict`` methods; :func:`lazy_strategy` picks, per entry, one
of the ways below (the template has one macro per way). The choice follows from what
the entry already says (its family, batch-size rule, result kind, receiver), so a new
entry gets a lazy form without any lazy-specific key; :data:`DENSE_OPS` lists the ops
of a lazily supported rule that still need the dense stack.

- ``inherit``: leaf-wise ops that keep the batch size, the keys and the nesting
  (pointwise, binary, cast, and the ``keep`` ops of the device family): the
  ``TensorDict`` form is inherited as it is. It runs on the lazy stack's primitives
  (``_leaves`` / ``_leaves_and_rebuild`` / ``_operand_leaves``), whose leaves are the
  members' leaves and whose rebuild builds a lazy stack of rebuilt members: one
  foreach call over every member's leaves, members of any shapes.
- ``rule``: batch-dim ops whose rule has a lazy counterpart in
  ``tensordict/_lazy_rules.py`` (``<rule>(stack, <rule args>, op)``): the dims are
  translated around the stack dim and the op runs per member (a permutation moves the
  stack dim, a flip or narrow of the stack dim reorders or selects the members, ...);
  where the op crosses the stack dim the rule runs it on the dense stack.
- ``reduce``: reductions and scans (``_lazy_rules.reduce``): per member over the other
  dims; over the stack dim, on the dense stack; reducing every leaf to one value
  (``reduce=True``, ``all()``), on the members' leaves.
- ``each``: ops reading a key (``target``), run on each member as they are.
- ``dense``: the rest (free reshapes, expansions, gathers, masks, conversions to Python
  data, new tensordicts): the op runs on the dense stack (``to_tensordict``), and an
  in-place form writes the result back into the members; a stack whose members cannot
  be stacked densely raises an error naming the op.
- ``stacking``: ``stack`` / ``cat`` classmethods (``_lazy_rules.stack`` / ``cat``).
"""

from __future__ import annotations

from codegen.model import Op
from codegen.schema import RESULTS

# The batch-size rules (codegen/schema.py BATCH_RULES) with a lazy counterpart in
# tensordict/_lazy_rules.py, taking the entry's rule arguments.
LAZY_RULES = frozenset(
    {
        "permute",
        "transpose",
        "movedim",
        "squeeze",
        "unsqueeze",
        "flatten",
        "unflatten",
        "narrow",
        "flip",
        "roll",
        "rot90",
        "split",
        "chunk",
        "tensor_split",
        "unbind",
    }
)

# Entries of a lazily supported family that still need the dense stack.
DENSE_OPS = frozenset({"norm"})

INHERITED_FAMILIES = frozenset({"pointwise", "binary", "cast"})

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
    "dense": (
        "On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked\n"
        "tensordicts whose shapes differ raise an error naming the op."
    ),
    "stacking": (
        "Lazy stacks are stacked densely (lazily under ``set_lazy_legacy(True)``);\n"
        "``cat`` along their stack dim joins their tensordicts without a copy."
    ),
}


def lazy_strategy(op: Op) -> str:
    """How ``op`` runs on a lazy stack: ``inherit``, ``rule``, ``reduce``, ``each``,
    ``dense`` or ``stacking`` (see the module docstring)."""
    if op.family in INHERITED_FAMILIES or getattr(op, "is_property", False):
        return "inherit"
    if op.signature.receiver == "cls":
        return "stacking"
    if op.name in DENSE_OPS:
        return "dense"
    if op.family == "reduction":
        return "reduce" if op.signature.has("dim") else "dense"
    if op.target is not None:
        return "each"
    if op.result not in RESULTS:  # gathered into Python data
        return "dense"
    if op.batch_size == "keep":
        # a dim counts batch dims, which the stacked tensordicts' leaves lack
        return "dense" if op.signature.has("dim") else "inherit"
    if op.batch_size in LAZY_RULES:
        return "rule"
    return "dense"


def lazy_note(op: Op) -> str:
    return NOTES[lazy_strategy(op)]


def lazy_note_for(strategy: str) -> str:
    """The note of ``strategy`` on one line (for tables)."""
    return " ".join(NOTES[strategy].split())
