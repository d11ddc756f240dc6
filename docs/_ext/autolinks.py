"""Sphinx extension: inline code in the guides links to its reference entry.

The guides are plain Markdown (readable on disk and on a forge), so they name the API
as inline code: `` `TensorDict.apply` ``, `` `td.memmap_(prefix)` ``,
`` `TensorDictModule` ``, `` `set_printoptions()` ``. After the pages are read, each
such literal that names a documented Python object (the API pages' entries) becomes a
link to that entry, in every page but the API pages themselves. Recognised spellings:
the full name (``tensordict.nn.TensorDictModule``), the name without the leading
``tensordict.`` (``nn.TensorDictModule``, ``TensorDict.apply``), a public name of
``tensordict`` or ``tensordict.nn`` alone (``TensorDictModule``), a method of
``TensorDict`` alone or after ``td.`` (``memmap_``, ``td.apply``), each with or
without a call's parentheses; ``LazyStackedTensorDict.apply`` (a container class
and a method it shares with ``TensorDict``) links to ``TensorDict.apply``.
"""

from __future__ import annotations

import re

import public_api
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

NAME = re.compile(r"^([A-Za-z_][\w.]*)(\(.*\))?$", re.S)
#: A call whose arguments hold arithmetic is a formula (``log(1 + x)``, ``1 / x``), not
#: a use of the API: it stays plain code.
FORMULA = re.compile(r"\s[-+*/]\s|\*\*")
SHORT_PREFIXES = ("tensordict.", "tensordict.nn.")
METHOD_OWNER = "tensordict.TensorDict."


def _lookup(env) -> dict[str, str]:
    table: dict[str, str] = {}
    objects = env.get_domain("py").objects
    for full, entry in objects.items():
        if entry.aliased or not full.startswith("tensordict"):
            continue
        table.setdefault(full, full)
        if full.startswith("tensordict."):
            table.setdefault(full[len("tensordict.") :], full)
        for prefix in SHORT_PREFIXES:
            rest = full[len(prefix) :]
            if full.startswith(prefix) and "." not in rest:
                table.setdefault(rest, full)
    containers = [c.rsplit(".", 1)[1] for c in public_api.CLASSES]
    for full in objects:  # methods of TensorDict by their name, after the names above
        if full.startswith(METHOD_OWNER):
            rest = full[len(METHOD_OWNER) :]
            table.setdefault(rest, full)
            table.setdefault("td." + rest, full)
            for container in containers:  # LazyStackedTensorDict.apply: TensorDict's
                table.setdefault(f"{container}.{rest}", full)
    return table


class LinkInlineCode(SphinxPostTransform):
    default_priority = 5  # before the references are resolved

    def run(self, **kwargs) -> None:
        docname = self.env.docname
        if docname.startswith("api/") or self.app.builder.format != "html":
            return
        table = getattr(self.env, "_tensordict_autolinks", None)
        if table is None:
            table = self.env._tensordict_autolinks = _lookup(self.env)
        objects = self.env.get_domain("py").objects
        for literal in list(self.document.findall(nodes.literal)):
            if isinstance(literal.parent, (nodes.reference, addnodes.pending_xref)):
                continue
            if isinstance(literal.parent, nodes.literal_block):
                continue
            match = NAME.match(literal.astext().strip())
            if match and match.group(2) and FORMULA.search(match.group(2)):
                continue
            target = table.get(match.group(1)) if match else None
            if target is None:
                continue
            entry = objects[target]
            uri = self.app.builder.get_relative_uri(docname, entry.docname)
            ref = nodes.reference(
                "", "", internal=True, refuri=f"{uri}#{entry.node_id}",
                reftitle=target, classes=["tensordict-autolink"],
            )
            ref.append(literal.deepcopy())
            literal.replace_self(ref)


def setup(app) -> dict:
    app.add_post_transform(LinkInlineCode)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
