"""The reference covers the whole public API (issue 28), and its examples run.

The public names are discovered from the package at test time (``docs/_ext/public_api.py``:
each namespace's ``__all__``, each container class's public attributes), so a name someone
exports is checked here at once, and the site (``bash scripts/docs.sh``) renders its entry
from the same list. Every public name needs a docstring (its one-line summary first, then
parameters, what it raises, and a ``>>>`` example). The names that still lack an example
are listed in ``tests/docs_missing_examples.txt``: a new name never goes there (write its
example), and a listed name that gains one must leave the list.

Examples run as doctests, in a scratch folder, with ``import torch`` and
``from tensordict import *`` done (and, for the names of
``tensordict.utils`` or another namespace, ``from <namespace> import *``); the spec's examples run in ``test_spec_examples.py``
and those of the ``tensordict.nn`` modules in ``test_nn_docs.py``.
"""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import public_api  # noqa: E402
import tensordict  # noqa: E402
from test_nn_docs import MODULES as NN_DOC_MODULES  # noqa: E402

NAMES = list(public_api.iter_names())
MISSING_EXAMPLES = ROOT / "tests" / "docs_missing_examples.txt"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _listed() -> set[str]:
    lines = MISSING_EXAMPLES.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_the_public_api_is_found():
    pages = {n.page for n in NAMES}
    assert {"tensordict", "nn", "utils", "functional", "class-TensorDict"} <= pages
    assert len(NAMES) > 400
    assert "tensordict.TensorDict.apply" in {n.qualname for n in NAMES}
    assert "tensordict.nn.TensorDictModule" in {n.qualname for n in NAMES}


def test_every_public_name_has_an_entry():
    """A docstring whose first line is a summary: what autodoc renders as the entry."""
    missing = [n.qualname for n in NAMES if not public_api.docstring(n).strip()]
    assert not missing, (
        f"{len(missing)} public names have no docstring, so no reference entry: "
        + ", ".join(missing)
    )


INPLACE = re.compile(r"In-place :meth:`(\w+)`")


def _has_example(name: public_api.Name, docs: dict[str, str]) -> bool:
    """A ``>>>`` example in the docstring; a generated in-place form ("In-place
    :meth:`abs`, returning ``self``.") is covered by the example of the op it names,
    which its entry links to."""
    doc = public_api.docstring(name)
    if ">>>" in doc:
        return True
    match = INPLACE.match(doc)
    owner = name.qualname.rsplit(".", 1)[0]
    return bool(match) and ">>>" in docs.get(f"{owner}.{match.group(1)}", "")


def test_every_public_name_has_an_example():
    docs = {n.qualname: public_api.docstring(n) for n in NAMES}
    without = {n.qualname for n in NAMES if not _has_example(n, docs)}
    new = sorted(without - _listed())
    assert not new, (
        "public names without an example in their docstring (write one; "
        f"tests/docs_missing_examples.txt only lists the old debt): {new}"
    )
    done = sorted(_listed() - without)
    assert not done, (
        f"these names have an example now or are gone: remove them from "
        f"{MISSING_EXAMPLES.name}: {done}"
    )


def _examples() -> list:
    """One doctest per documented object (an object exported under several names once)."""
    seen, tests = set(), []
    finder = doctest.DocTestFinder(recurse=False)
    for name in NAMES:
        obj = name.obj
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        target = obj.fget if isinstance(obj, property) else obj
        module = getattr(target, "__module__", None) or ""
        if module.startswith("tensordict._generated") or module in NN_DOC_MODULES:
            continue  # run by test_spec_examples.py / test_nn_docs.py
        if id(obj) in seen or ">>>" not in public_api.docstring(name):
            continue
        seen.add(id(obj))
        parsed = doctest.DocTestParser().get_doctest(
            public_api.docstring(name), {}, name.qualname, None, 0
        )
        tests.append(pytest.param(parsed, name.page, id=name.qualname))
    return tests


def _namespace(page: str) -> dict:
    """``import torch``, ``from tensordict import *`` and, for a name of another
    namespace (``tensordict.nn``...), ``from <that namespace> import *``."""
    globs = {"torch": torch, "tensordict": tensordict}
    globs.update({n: getattr(tensordict, n) for n in tensordict.__all__})
    module = public_api.PAGE_MODULES.get(page)
    if module and module != "tensordict":
        mod = public_api.resolve(module)
        globs.update({n: getattr(mod, n) for n in public_api.module_names(module)})
    return globs


@pytest.mark.parametrize("test, page", _examples())
def test_reference_example_runs(
    test, page, tmp_path, monkeypatch, restore_modes, optional_guard
):
    optional_guard(test.docstring or "")
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    torch.manual_seed(0)
    test.globs = _namespace(page)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
