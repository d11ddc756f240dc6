"""Which locked tensordicts hold a tensordict, so that a nested one cannot be unlocked
behind its parent's back.

Locking a tensordict locks everything it holds. Code written for 0.15.3 relies on the
converse too: ``td["sub"].unlock_()`` while ``td`` is locked raises ``RuntimeError``
(unlock the root instead), and so does unlocking a root that shares a nested
tensordict with another locked graph. Each lock holder (a dense level, a lazy stack, a
non-tensor stack) remembers, as weak references, the holders whose lock reached it;
:func:`unlock` refuses while one of them outside the tree being unlocked is still
locked, before anything changes.

The walk mirrors ``_set_lock``: a dense level's nested containers, a lazy stack's
members, a tensorclass's tensordict, a view's source. Its cost is paid by ``lock_`` and
``unlock_`` only.
"""

from __future__ import annotations

import weakref

from tensordict._tensorcollection import TensorCollection

# id(holder) -> (weak reference to the holder, [weak references to its locked parents])
_PARENTS: dict[int, tuple[weakref.ref, list[weakref.ref]]] = {}


def _holder(node):
    """The object whose ``_is_locked`` a container's lock is: a tensorclass's
    tensordict, a view's source (recursively), else the container itself."""
    while True:
        storage = getattr(node, "_tensordict", None)
        if isinstance(storage, TensorCollection):
            node = storage
            continue
        source = getattr(node, "_source", None)
        if isinstance(source, TensorCollection):
            node = source
            continue
        return node


def _children(holder) -> list:
    """The holders ``holder``'s lock reaches directly."""
    members = getattr(holder, "tensordicts", None)
    if isinstance(members, list):  # a lazy stack: its members
        values = members
    else:
        storage = getattr(holder, "_tensordict", None)
        values = storage.values() if isinstance(storage, dict) else ()
    return [
        _holder(v)
        for v in values
        if isinstance(v, TensorCollection) and not isinstance(v, type)
    ]


def _tree(root) -> dict[int, object]:
    """Every holder of ``root``'s tree, by id (``root``'s own holder included)."""
    out: dict[int, object] = {}
    todo = [_holder(root)]
    while todo:
        node = todo.pop()
        if id(node) in out:
            continue
        out[id(node)] = node
        todo.extend(_children(node))
    return out


def _forget(key: int) -> None:
    _PARENTS.pop(key, None)


def _parents_of(holder) -> list[weakref.ref]:
    key = id(holder)
    entry = _PARENTS.get(key)
    if entry is None or entry[0]() is not holder:
        try:
            ref = weakref.ref(holder, lambda _, key=key: _forget(key))
        except TypeError:  # a holder without weak references: not tracked
            return []
        entry = _PARENTS[key] = (ref, [])
    return entry[1]


def parents_weakrefs(node) -> list[weakref.ref]:
    """The weak references to the locked holders whose lock reached ``node`` (those
    still alive): every ancestor on the way from the root that was locked, not only
    the direct parent; what 0.15.3 calls ``_lock_parents_weakrefs``. A lazy stack
    answers for its members too (what they answer, itself left out): indexing a
    locked stack gives a new stack of the members' nested tensordicts, which is held
    wherever they are."""
    holder = _holder(node)
    refs = _own_parents(holder)
    members = getattr(holder, "tensordicts", None)
    if isinstance(members, list):
        seen = {id(ref()) for ref in refs}
        seen.add(id(holder))
        for member in members:
            if not isinstance(member, TensorCollection):
                continue
            for ref in parents_weakrefs(member):
                obj = ref()
                if obj is not None and id(obj) not in seen:
                    seen.add(id(obj))
                    refs.append(ref)
    return refs


def _own_parents(holder) -> list[weakref.ref]:
    entry = _PARENTS.get(id(holder))
    if entry is None or entry[0]() is not holder:
        return []
    return [ref for ref in entry[1] if ref() is not None]


def record(root) -> None:
    """After ``root`` was locked: every holder of its tree remembers the holders whose
    lock reached it, that is every holder on the way down from ``root`` (as 0.15.3,
    which hands each nested tensordict the list of the locked tensordicts above it).
    A holder reached along several ways remembers the holders of each."""
    todo: list[tuple[object, tuple]] = [(_holder(root), ())]
    while todo:
        parent, chain = todo.pop()
        children = _children(parent)
        if not children:
            continue
        try:
            chain = chain + (weakref.ref(parent),)
        except TypeError:  # a holder without weak references: not tracked
            pass
        above = [ref() for ref in chain]
        for child in children:
            if any(obj is child for obj in above):  # a tensordict holding itself
                continue
            parents = _parents_of(child)
            for ref, obj in zip(chain, above):
                if obj is not None and not any(r() is obj for r in parents):
                    parents.append(ref)
            todo.append((child, chain))


def lock(root) -> None:
    """Lock ``root`` and its tree, recording who holds whom (no snapshot: for results
    that were never unlocked to anyone)."""
    root._set_lock(True)
    record(root)


def check_unlock(root) -> None:
    """Raise ``RuntimeError`` if a tensordict outside ``root``'s tree, still locked,
    holds ``root`` or something in its tree."""
    tree = _tree(root)
    for key, holder in tree.items():
        entry = _PARENTS.get(key)
        if entry is None or entry[0]() is not holder:
            continue
        outside = []
        for ref in entry[1]:
            parent = ref()
            if parent is not None and id(parent) not in tree and parent._is_locked:
                outside.append(parent)
        if not outside:
            continue
        # name the tensordict that holds it directly where one is locked (the others
        # are further up the same graph)
        parent, place = outside[0], None
        for candidate in outside:
            place = _place(candidate, holder)
            if place is not None:
                parent = candidate
                break
        what = "it" if holder is _holder(root) else "a tensordict it holds"
        where = (
            f"{what} is {place} of a locked"
            if place is not None
            else f"{what} is nested in a locked"
        )
        raise RuntimeError(
            f"Cannot unlock a tensordict that is part of a locked graph. "
            f"unlock_(): cannot unlock a {type(root).__name__} with batch_size "
            f"{list(root.batch_size)}: {where} {type(parent).__name__} (batch_size "
            f"{list(parent.batch_size)}); unlock that root tensordict instead "
            f"(or hold both graphs under one root)"
        )


def _place(parent, holder) -> str | None:
    """Where ``parent`` holds ``holder``: "the entry 'key'" or "member i" (``None``
    when it does not hold it directly)."""
    members = getattr(parent, "tensordicts", None)
    if isinstance(members, list):
        for i, member in enumerate(members):
            if _holder(member) is holder:
                return f"member {i}"
    storage = getattr(parent, "_tensordict", None)
    if isinstance(storage, dict):
        for key, value in storage.items():
            if isinstance(value, TensorCollection) and _holder(value) is holder:
                return f"the entry {key!r}"
    return None


def unlock(root) -> None:
    """Unlock ``root`` and its tree, after :func:`check_unlock`; the links are
    forgotten (every parent they named is unlocked now)."""
    check_unlock(root)
    tree = _tree(root)
    root._set_lock(False)
    for key in tree:
        _PARENTS.pop(key, None)


def keep_lock(source, result):
    """``result`` (a container, or a tuple or list of them), locked at every level
    when ``source`` is locked. An unlocked input costs one attribute read."""
    if source._is_locked and result is not source:
        if isinstance(result, (tuple, list)):
            for item in result:
                lock(item)
        else:
            lock(result)
    return result
