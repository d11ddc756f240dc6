"""The README's quick start runs as printed."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_quick_start_runs():
    text = README.read_text()
    section = text[text.index("## Quick start") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md quick start", "exec"), {})
    printed = out.getvalue()
    # the printed repr is the verbose one the README shows
    assert printed.startswith(
        "TensorDict(\n    fields={\n        action: Tensor(shape="
    )
    assert "batch_size=torch.Size([4])" in printed


# --------------------------------------------------------------------------------------
# The README's other claims, each checked where it can run.
# --------------------------------------------------------------------------------------

import importlib  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

ROOT = README.parent


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end != -1 else None]


def _table_names() -> set[str]:
    """The plain names (``name`` in backquotes) of the "What is here" table."""
    table = _section("## What is here").split("**Not yet**")[0]
    names = set()
    folders = {p.name for p in ROOT.iterdir() if p.is_dir()}
    for token in re.findall(r"`([^`]+)`", table):
        if token.split("/")[0] in folders:  # a path, checked below
            continue
        for part in token.split("/"):
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
                names.add(part)
    return names


def _where_names_live():
    import tensordict
    import tensordict.nn
    import tensordict.tensorclass

    return (
        tensordict,
        tensordict.TensorDict,
        tensordict.LazyStackedTensorDict,
        tensordict.tensorclass,
        tensordict.nn,
        tensordict.nn.TensorDictModule,
        tensordict.nn.TensorDictSequential,
        tensordict.NonTensorStack,
        tensordict.utils,
        torch.distributed,
        torch.func,
    )


def test_every_name_in_the_table_exists():
    import inspect

    import torch.utils._pytree

    homes = _where_names_live() + (torch.utils._pytree,)
    # keywords of torch.vmap the table lists as supported
    vmap_keywords = set(inspect.signature(torch.vmap).parameters)
    # words of the table that name no callable: file names, option values, packages
    not_api = {"dict", "pandas", "parquet", "safetensors", "tensordict", "h5", "mypy"}
    not_api |= {"None"} | vmap_keywords
    missing = sorted(
        name
        for name in _table_names() - not_api
        if not any(hasattr(home, name) for home in homes)
        and not (ROOT / "tensordict" / f"{name}.py").exists()
    )
    assert not missing, f"the README's table names {missing}, which do not exist"


def test_every_path_the_readme_names_exists():
    text = README.read_text()
    paths = {
        token
        for token in re.findall(r"`([^` ]+)`", text)
        if "/" in token
        and not token.startswith(("../", "http"))
        and re.fullmatch(r"[\w./-]+", token)
        and not token.startswith("tensordict/_generated/")  # a folder, generated
        and not token.startswith("docs/_build/")  # what scripts/docs.sh builds
    }
    assert paths, "the README names no paths?"
    missing = sorted(p for p in paths if not (ROOT / p.rstrip("/")).exists())
    # `docs/reference/` and other folders count; so do the paths of the table
    assert not missing, f"the README names {missing}, which do not exist"


def test_import_paths_resolve():
    paragraph = _section("**Not yet**").split("## How it is built")[0]
    paragraph = paragraph[paragraph.index("Import paths") :]
    modules = re.findall(r"`(tensordict(?:\.\w+)*)`", paragraph)
    nn_sub = re.search(r"`tensordict\.nn` \(with (.*?)\)", paragraph, re.S).group(1)
    modules += [f"tensordict.nn.{m}" for m in re.findall(r"`(\w+)`", nn_sub)]
    assert len(modules) > 15
    for module in modules:
        importlib.import_module(module)


def test_table_converters_the_readme_lists_exist():
    # the README's converters row names these (they were under "Not yet" before)
    import tensordict
    from tensordict import TensorDict

    for name in ("to_csv", "from_csv", "to_zarr", "from_zarr", "to_mds"):
        assert hasattr(TensorDict, name), name
    for name in ("from_arrow", "to_arrow", "from_csv", "from_zarr"):
        assert hasattr(tensordict, name), name


def test_converters_and_print_options_claims(tmp_path):
    import numpy as np

    import tensordict
    from tensordict import TensorDict, set_printoptions

    td = TensorDict(a=torch.arange(3.0), b={"c": torch.arange(3)}, batch_size=[3])
    assert (TensorDict.from_struct_array(td.to_struct_array()) == td).all()
    assert isinstance(td.to_struct_array(), np.ndarray)
    assert (
        tensordict.from_json(td.to_json(tmp_path / "t.json") or tmp_path / "t.json")
        == td
    ).all()
    with set_printoptions(compact=True):
        assert (
            repr(td) == "TensorDict(batch_size=[3], fields={a: f32[], b: {c: i64[]}})"
        )
    assert repr(td).startswith("TensorDict(\n    fields={")  # the verbose default


def test_errors_section():
    from tensordict import TensorDict

    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4])
    with pytest.raises(Exception) as info:
        td["b"] = torch.zeros(5)
    message = str(info.value)
    assert "'b'" in message and "5" in message and "4" in message
    with pytest.raises(KeyError) as info:
        td["missing"]
    assert 'key "missing" not found' in info.value.args[0] and "'a'" in info.value.args[0]
    td.lock_()
    with pytest.raises(RuntimeError, match="locked"):
        td["c"] = torch.zeros(4)
    td.unlock_()
    other = TensorDict(z=torch.zeros(4, 3), batch_size=[4])
    with pytest.raises(Exception) as info:
        td + other
    assert "'a'" in str(info.value) or "'z'" in str(info.value)
