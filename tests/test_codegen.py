"""Tests of the code generator: spec validation (every name a snippet uses resolved at
generation time), named signatures, --check, adding/removing entries, determinism, a
family added as a plug-in, and the size of the generator's modules. Every test that
writes works on a temporary copy of the repository's spec/ and output folders
(``python -m codegen --root DIR``)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.__main__ import main
from codegen.families import families, register, unregister
from codegen.loader import load_spec
from codegen.model import Op, SpecError
from codegen.render import OUTPUT_DIRS, existing_outputs, render_all, render_spec

# The signatures tensordict 0.15.3 lists for the methods the spec generates.
API_SIGNATURES = Path(__file__).resolve().parent / "api_signatures.tsv"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of spec/ and the generated folders, as a root for ``--root``."""
    shutil.copytree(ROOT / "spec", tmp_path / "spec")
    for folder in OUTPUT_DIRS:
        if (ROOT / folder).is_dir():
            shutil.copytree(
                ROOT / folder,
                tmp_path / folder,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
    return tmp_path


def class_methods(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    return {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}


def write_spec(root: Path, name: str, text: str) -> Path:
    path = root / "spec" / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def problems(root: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(root / "spec")
    return info.value.problems


# --------------------------------------------------------------------------------------
# Validation.
# --------------------------------------------------------------------------------------

GOOD_ENTRY = """
  - name: {name}
    summary: A test op.
    details: Nothing more.
    example: |
      >>> 1 + 1
      2
"""

HEADER = """
family: pointwise
title: Pointwise
doc: Test family.
defaults:
  signature: "(self) -> Self"
  leaf: "torch.{name}(x)"
ops:
"""


def test_validation_reports_file_line_and_entry(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    write_spec(
        tmp_path,
        "pointwise.yaml",
        HEADER + GOOD_ENTRY.format(name="abs") + """
  - name: sin
    colour: blue
    summary: Sine.
    details: More.
    example: ">>> 1"
  - name: cos
    summary: Cosine.
    example: ">>> 1"
  - name: tan
    signature: "(self, x y)"
    summary: Tangent.
    details: More.
    example: ">>> 1"
  - name: abs
    summary: Again.
    details: More.
    example: ">>> 1"
  - name: exp
    leaf: "torch.nope(x)"
    summary: Exp.
    details: More.
    example: ">>> 1"
  - name: log
    leaf: "torch.log(y)"
    summary: Log.
    details: More.
    example: ">>> 1"
  - name: erf
    batch_size: squeeze
    summary: Erf.
    details: More.
    example: ">>> 1"
""",
    )
    found = problems(tmp_path)
    expected = [
        r"spec/pointwise\.yaml:17: entry 'sin': unknown key 'colour'",
        r"spec/pointwise\.yaml:21: entry 'cos': missing required field 'details'",
        r"spec/pointwise\.yaml:25: entry 'tan': bad signature '\(self, x y\)'",
        r"spec/pointwise\.yaml:29: entry 'abs': duplicate name 'abs' \(already defined "
        r"at spec/pointwise\.yaml:9\)",
        r"spec/pointwise\.yaml:34: entry 'exp': 'leaf': torch has no attribute 'nope'",
        r"spec/pointwise\.yaml:39: entry 'log': 'leaf' uses the unknown name 'y'",
        r"spec/pointwise\.yaml:44: entry 'erf': unknown key 'batch_size' for family "
        r"'pointwise'",
    ]
    for pattern in expected:
        assert any(re.match(pattern, p) for p in found), (pattern, found)
    assert len(found) == len(expected) + 1  # log also does not use 'x'


def test_unknown_family_and_file_level_problems(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    write_spec(
        tmp_path,
        "shapes.yaml",
        """
        family: shapes
        title: Shapes
        doc: Nope.
        ops: []
        """,
    )
    write_spec(tmp_path, "broken.yaml", "family: [unclosed\n")
    write_spec(
        tmp_path,
        "cast.yaml",
        """
        family: cast
        title: Casts
        colour: red
        doc: Casts.
        ops:
          - name: float
            signature: "(self) -> Self"
            leaf: "x.float()"
            summary: Float.
            details: Float.
            example: ">>> 1"
        """,
    )
    found = problems(tmp_path)
    assert any(p.startswith("spec/broken.yaml:") and "invalid YAML" in p for p in found)
    assert (
        "spec/shapes.yaml:1: unknown family 'shapes' "
        f"(known: {', '.join(sorted(families()))})" in found
    )
    assert any(
        p.startswith("spec/cast.yaml:3: unknown top-level key 'colour'") for p in found
    )
    assert any(
        p.startswith(
            "spec/cast.yaml:7: entry 'float': a cast signature takes the "
            "keyword-only parameter 'cast_filter'"
        )
        for p in found
    ), found


def test_binary_rules_are_checked(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    write_spec(
        tmp_path,
        "binary.yaml",
        """
        family: binary
        title: Binary
        doc: Binary.
        ops:
          - name: add
            signature: "(self, other: Frobnicator) -> Self"
            operands: [other]
            leaf: "torch.add(x, other)"
            summary: Add.
            details: Add.
            example: ">>> 1"
          - name: sub
            signature: "(self, other, *, alpha=None) -> Self"
            operands: [another]
            leaf: "torch.sub(x, other)"
            foreach: "torch.sub(leaves, other)"
            drop_if_none: [alpha]
            dunders: [__sub__, __frob__]
            summary: Sub.
            details: Sub.
            example: ">>> 1"
        """,
    )
    found = "\n".join(problems(tmp_path))
    assert "spec/binary.yaml:6: entry 'add': bad signature" in found
    assert "unknown type name 'Frobnicator'" in found
    assert (
        "spec/binary.yaml:14: entry 'sub': operands: 'another' is not a parameter"
        in found
    )
    assert (
        "spec/binary.yaml:16: entry 'sub': 'foreach' must be one call of a "
        "torch._foreach_* function" in found
    )
    assert "spec/binary.yaml:17: entry 'sub': 'leaf' does not pass alpha=alpha" in found
    assert (
        "spec/binary.yaml:18: entry 'sub': '__frob__' is not an operator dunder"
        in found
    )
    assert (
        "uses the unknown name" not in found
    )  # no follow-on noise from a bad signature


def test_the_repository_spec_is_valid() -> None:
    spec = load_spec(ROOT / "spec")
    # every spec file holds one family
    assert len(spec.families) == len(list((ROOT / "spec").glob("*.yaml")))
    assert len(spec.method_names()) == len(set(spec.method_names()))


# --------------------------------------------------------------------------------------
# --check, writing, adding and removing entries.
# --------------------------------------------------------------------------------------


def test_check_passes_on_the_repository(capsys) -> None:
    assert main(["--check", "--root", str(ROOT)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_detects_drift_missing_and_extra(repo: Path, capsys) -> None:
    assert main(["--check", "--root", str(repo)]) == 0
    ops_py = repo / "tensordict/_generated/tensordict_ops.py"
    ops_py.write_text(ops_py.read_text() + "\n# edited by hand\n")
    (repo / "docs/reference/cast.md").unlink()
    (repo / "docs/reference/stale.md").write_text("left over\n")
    (repo / "tensordict/_generated/old_ops.py").write_text("# old\n")
    capsys.readouterr()

    assert main(["--check", "--root", str(repo)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "drifted: tensordict/_generated/tensordict_ops.py",
        "missing: docs/reference/cast.md",
        "extra: docs/reference/stale.md",
        "extra: tensordict/_generated/old_ops.py",
    ]
    # --check wrote nothing
    assert "# edited by hand" in ops_py.read_text()
    assert not (repo / "docs/reference/cast.md").exists()

    assert main(["--root", str(repo)]) == 0
    written = capsys.readouterr().out.splitlines()
    assert written == [
        "wrote docs/reference/cast.md",
        "wrote tensordict/_generated/tensordict_ops.py",
        "deleted docs/reference/stale.md",
        "deleted tensordict/_generated/old_ops.py",
    ]
    assert main(["--check", "--root", str(repo)]) == 0


def test_writes_only_changed_files(repo: Path, capsys) -> None:
    before = {rel: p.stat().st_mtime_ns for rel, p in existing_outputs(repo).items()}
    assert main(["--root", str(repo)]) == 0
    assert "up to date" in capsys.readouterr().out
    after = {rel: p.stat().st_mtime_ns for rel, p in existing_outputs(repo).items()}
    assert before == after


# A made-up name (no torch function, no spec entry has it: checked below), so that a
# contributor adding a real op cannot collide with the test's sample.
NEW_NAME = "sample_recip_sqrt"
NEW_OP = """
  - name: sample_recip_sqrt
    leaf: "torch.rsqrt(x)"
    foreach: "torch._foreach_rsqrt(leaves)"
    torch_function: []
    tests: {oracle: "torch.rsqrt(x)"}
    inplace:
      leaf: "x.rsqrt_()"
      foreach: "torch._foreach_rsqrt_(leaves)"
      torch_function: []
    summary: Reciprocal square root of every leaf.
    details: |
      ``1 / sqrt(x)``.
    example: |
      >>> td = TensorDict(a=torch.tensor([4.0, 16.0]), batch_size=[2])
      >>> td.sample_recip_sqrt()["a"]
      tensor([0.5000, 0.2500])
"""


def _remove_entry(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.strip() == f"- name: {name}")
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if lines[i].lstrip().startswith("- name:")
        ),
        len(lines),
    )
    return "".join(lines[:start] + lines[end:])


def test_the_sample_op_collides_with_nothing() -> None:
    import torch

    assert not hasattr(torch, NEW_NAME) and not hasattr(torch.Tensor, NEW_NAME)
    names = {n for op in load_spec(ROOT / "spec").ops() for n in op.method_names()}
    assert NEW_NAME not in names and NEW_NAME + "_" not in names


def test_adding_and_removing_entries(repo: Path, capsys) -> None:
    spec_file = repo / "spec/pointwise.yaml"
    text = _remove_entry(spec_file.read_text(), "abs") + NEW_OP
    spec_file.write_text(text)

    assert main(["--check", "--root", str(repo)]) == 1
    assert main(["--root", str(repo)]) == 0
    capsys.readouterr()

    module = repo / "tensordict/_generated/tensordict_ops.py"
    stub = repo / "tensordict/_generated/tensordict_ops.pyi"
    page = (repo / "docs/reference/pointwise.md").read_text()
    index = (repo / "docs/reference/index.md").read_text()
    for path in (module, stub):
        methods = class_methods(path)
        assert {NEW_NAME, NEW_NAME + "_"} <= methods, path
        assert not {"abs", "abs_", "__abs__"} & methods, path
    assert f"## `{NEW_NAME}`" in page and f"TensorDict.{NEW_NAME}_(self) -> Self" in page
    assert "## `abs`" not in page and "`__abs__`" not in index
    assert f"`{NEW_NAME}_`" in index
    body = module.read_text()
    assert "torch._foreach_rsqrt_" in body and "torch._foreach_rsqrt," in body
    assert main(["--check", "--root", str(repo)]) == 0


def test_the_readme_recipe_is_a_complete_entry(repo: Path, capsys, monkeypatch) -> None:
    """The README's add-an-op example, appended as written, renders a method that
    ``torch.X(td)`` reaches and that computes torch's answer."""
    import types

    import torch

    from tensordict import TensorDict
    from tensordict import _torch_function
    from tensordict._generated import tensordict_ops

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"### Adding an op.*?```yaml\n(.*?)```", readme, re.S).group(1)
    name = re.search(r"- name: (\w+)", block).group(1)
    spec_file = repo / "spec/pointwise.yaml"
    text = spec_file.read_text()
    if f"- name: {name}\n" in text:  # the op was added for real since: replay it anyway
        text = _remove_entry(text, name)
    spec_file.write_text(text.rstrip("\n") + "\n" + block)
    assert main(["--root", str(repo)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    rendered = {}
    for module in ("tensordict_ops", "torch_functions"):
        rendered[module] = types.ModuleType(f"readme_{module}")
        source = (repo / f"tensordict/_generated/{module}.py").read_text()
        exec(source, vars(rendered[module]))
    table = rendered["torch_functions"].TORCH_FUNCTIONS
    torch_fn = getattr(torch, name)
    assert torch_fn in table, f"the README's entry gives no torch_function for {name}"
    method = getattr(rendered["tensordict_ops"].TensorDictGeneratedOps, name)
    monkeypatch.setattr(tensordict_ops.TensorDictGeneratedOps, name, method, raising=False)
    monkeypatch.setitem(_torch_function.TORCH_FUNCTIONS, torch_fn, table[torch_fn])
    td = TensorDict(a=torch.tensor([0.0, 3.0]), sub={"b": torch.ones(2)}, batch_size=[2])
    out = torch_fn(td)
    torch.testing.assert_close(out["a"], torch_fn(td["a"]))
    torch.testing.assert_close(out["sub", "b"], torch_fn(td["sub", "b"]))


def test_removing_a_family_deletes_its_outputs(repo: Path, capsys) -> None:
    (repo / "spec/cast.yaml").unlink()
    assert main(["--root", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "deleted docs/reference/cast.md" in out
    assert not (repo / "docs/reference/cast.md").exists()
    methods = class_methods(repo / "tensordict/_generated/tensordict_ops.py")
    assert "float32" not in methods and "add" in methods
    assert (
        "cast" not in (repo / "docs/reference/index.md").read_text().split("## All")[0]
    )


def test_invalid_spec_exits_2_and_writes_nothing(repo: Path, capsys) -> None:
    spec_file = repo / "spec/pointwise.yaml"
    spec_file.write_text(
        spec_file.read_text().replace(
            "  - name: sin\n", "  - name: sin\n    bogus: 1\n"
        )
    )
    before = {rel: p.read_text() for rel, p in existing_outputs(repo).items()}
    assert main(["--root", str(repo)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"spec/pointwise\.yaml:\d+: entry 'sin': unknown key 'bogus'", err)
    assert before == {rel: p.read_text() for rel, p in existing_outputs(repo).items()}


def test_cli_runs_as_a_module(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "--check", "--root", str(repo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------------------
# The output itself.
# --------------------------------------------------------------------------------------


def test_rendering_is_deterministic(repo: Path) -> None:
    first = render_all(ROOT)
    second = render_all(repo)
    assert first == second
    assert list(first) == sorted(first)
    for rel, text in first.items():
        assert text.encode() == (ROOT / rel).read_bytes(), rel


def test_generated_files_say_where_they_come_from() -> None:
    for rel, text in render_all(ROOT).items():
        first = text.splitlines()[0]
        assert re.match(r"^(# |<!-- )generated from spec/\S+\.yaml", first), rel
        assert "do not edit" in first, rel


def test_generated_module_shape() -> None:
    from tensordict._generated import TensorDictGeneratedOps
    from tensordict._generated.tensordict_ops import __all__ as exported

    assert exported == ["TensorDictGeneratedOps"]
    assert TensorDictGeneratedOps.__slots__ == ()
    spec = load_spec(ROOT / "spec")
    module_methods = class_methods(ROOT / "tensordict/_generated/tensordict_ops.py")
    stub_methods = class_methods(ROOT / "tensordict/_generated/tensordict_ops.pyi")
    assert module_methods == stub_methods == set(spec.method_names())


def _api_signatures() -> dict[str, str]:
    out = {}
    for line in API_SIGNATURES.read_text().splitlines():
        if line and not line.startswith("#"):
            name, signature = line.split("\t")
            out[name] = signature
    return out


def test_signatures_match_the_api_surface() -> None:
    """Where the users' API lists a generated method, the signature is the listed one."""
    import inspect

    from tensordict._generated import TensorDictGeneratedOps

    listed = _api_signatures()
    checked = 0
    for name in load_spec(ROOT / "spec").method_names():
        if name not in listed:
            continue
        got = str(inspect.signature(getattr(TensorDictGeneratedOps, name)))
        if listed[name].endswith("..."):  # the listing cuts long signatures short
            assert got.startswith(listed[name][:-3]), name
        else:
            assert got == listed[name], name
        checked += 1
    assert checked > 100


# --------------------------------------------------------------------------------------
# Names resolved at generation time; the spec-driven oracle comes from torch.
# --------------------------------------------------------------------------------------

ERFINV = """
family: pointwise
title: Pointwise
doc: Test family.
signatures:
  unary: "(self) -> Self"
ops:
  - name: erfinv
    signature: unary
    leaf: "{leaf}"
    inplace: {{name: erfinv_, signature: unary, leaf: "{inplace}"}}
    summary: Inverse error function.
    details: More.
    example: ">>> 1"
"""


def test_a_misspelt_tensor_method_fails_codegen(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    write_spec(tmp_path, "pointwise.yaml", ERFINV.format(leaf="torch.erfinv(x)", inplace="x.erfinvv_()"))
    found = "\n".join(problems(tmp_path))
    assert "entry 'erfinv': 'inplace leaf': torch.Tensor has no attribute 'erfinvv_'" in found
    write_spec(tmp_path, "pointwise.yaml", ERFINV.format(leaf="torch.erfinvv(x)", inplace="x.erfinv_()"))
    assert "'leaf': torch has no attribute 'erfinvv'" in "\n".join(problems(tmp_path))


def test_a_test_oracle_may_use_only_known_names(tmp_path: Path) -> None:
    """``tests: oracle`` is an expression over ``x``, the op's parameters and the names
    tests/spec_cases.py gives it; anything else fails ``python -m codegen``."""
    (tmp_path / "spec").mkdir()
    entry = ERFINV.format(leaf="torch.erfinv(x)", inplace="x.erfinv_()")
    write_spec(tmp_path, "pointwise.yaml", entry + '    tests: {oracle: "torch.erfinv(y)"}\n')
    found = "\n".join(problems(tmp_path))
    assert "entry 'erfinv': tests: 'torch.erfinv(y)' uses the unknown name 'y'" in found
    write_spec(tmp_path, "pointwise.yaml", entry + '    tests: {oracle: "torch.erfinv(x"}\n')
    assert "is not an expression" in "\n".join(problems(tmp_path))
    write_spec(tmp_path, "pointwise.yaml", entry + '    tests: {oracle: "torch.special.erfinv(x)"}\n')
    (op,) = load_spec(tmp_path / "spec").ops()
    assert op.tests.oracle == "torch.special.erfinv(x)"


def _erfinv_method(tmp_path: Path, monkeypatch, leaf: str, inplace: str) -> Op:
    """The generated ``erfinv`` / ``erfinv_`` of an entry, installed on TensorDict."""
    import tensordict._generated.tensordict_ops as generated

    (tmp_path / "spec").mkdir(exist_ok=True)
    write_spec(tmp_path, "pointwise.yaml", ERFINV.format(leaf=leaf, inplace=inplace))
    (op,) = load_spec(tmp_path / "spec").ops()
    namespace: dict = {}
    exec(op.tensordict_code(), dict(vars(generated)), namespace)
    for name in ("erfinv", "erfinv_"):
        monkeypatch.setattr(generated.TensorDictGeneratedOps, name, namespace[name], raising=False)
    return op


def test_a_wrong_leaf_fails_the_spec_driven_tests(tmp_path: Path, monkeypatch) -> None:
    """``torch.erf`` as the leaf of ``erfinv`` is valid Python that codegen accepts; the
    spec-driven test compares the method with ``torch.erfinv`` and fails."""
    import test_spec_ops

    op = _erfinv_method(tmp_path, monkeypatch, "torch.erf(x)", "x.erf_()")
    with pytest.raises(AssertionError) as info:
        test_spec_ops.check_out_of_place(op)
    # the message names the form, the entry's leaf and the call the test expected
    message = str(info.value)
    assert "the out-of-place form of erfinv" in message, message
    assert "'torch.erf(x)'" in message and "torch.erfinv(x, ...)" in message, message
    # the in-place form is checked against the out-of-place one, not against torch
    op = _erfinv_method(tmp_path, monkeypatch, "torch.erfinv(x)", "x.erf_()")
    assert test_spec_ops.check_out_of_place(op)
    with pytest.raises(AssertionError) as info:
        test_spec_ops.check_inplace(op)
    assert "the in-place form (erfinv_" in str(info.value), str(info.value)
    # the right entry passes both
    op = _erfinv_method(tmp_path, monkeypatch, "torch.erfinv(x)", "x.erfinv_()")
    assert test_spec_ops.check_out_of_place(op)
    test_spec_ops.check_inplace(op)


# --------------------------------------------------------------------------------------
# Named signatures.
# --------------------------------------------------------------------------------------

SIGNATURES = """
family: pointwise
title: Pointwise
doc: Test family.
signatures:
  unary: "(self) -> Self"
  scaled:
    extends: unary
    keywords: "scale: float = 1.0"
defaults:
  leaf: "torch.{name}(x)"
ops:
  - name: abs
    signature: unary
    summary: Abs.
    details: More.
    example: ">>> 1"
  - name: exp
    signature: scaled
    leaf: "torch.exp(x) * scale"
    summary: Exp.
    details: More.
    example: ">>> 1"
"""


def test_named_signatures(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    write_spec(tmp_path, "pointwise.yaml", SIGNATURES)
    ops = {op.name: op for op in load_spec(tmp_path / "spec").ops()}
    assert ops["abs"].signature.text == "(self) -> Self"
    assert ops["exp"].signature.text == "(self, *, scale: float = 1.0) -> Self"
    # a signature string written twice, or a name nobody declared, is an error
    write_spec(tmp_path, "pointwise.yaml", SIGNATURES.replace(
        "signature: unary\n    summary: Abs.", 'signature: "(self, a: int)"\n    summary: Abs.'
    ).replace("signature: scaled", 'signature: "(self, a: int)"'))
    found = "\n".join(problems(tmp_path))
    assert "the signature '(self, a: int)' is written again (first at line" in found
    assert "declare it once under 'signatures:'" in found
    write_spec(tmp_path, "pointwise.yaml", SIGNATURES.replace("signature: scaled", "signature: scalde"))
    assert "unknown signature name 'scalde' (known: scaled, unary)" in "\n".join(problems(tmp_path))


def test_the_repository_spec_repeats_no_signature() -> None:
    """Every signature string is written once per spec file (loading checks it)."""
    for path in (ROOT / "spec").glob("*.yaml"):
        texts = re.findall(r'^\s*(?:- )?signature: "(.*)"\s*$', path.read_text(), re.M)
        assert len(texts) == len(set(texts)), path.name


# --------------------------------------------------------------------------------------
# A family is a plug-in: one module and one YAML file.
# --------------------------------------------------------------------------------------

TOY_FAMILY = '''
"""A toy family: every leaf scaled by a factor. Its template, toy.jinja, sits beside
this module (``template_dir``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Op


@register
@dataclass(frozen=True, kw_only=True)
class ToyOp(Op):
    family: ClassVar[str] = "toy"
    KEYS: ClassVar[frozenset] = frozenset({"leaf"})
    template_dir: ClassVar[Path] = Path(__file__).parent

    leaf: str

    @classmethod
    def parse(cls, entry: Entry) -> ToyOp | None:
        parse.require(entry, "leaf")
        shared = parse.common(entry)
        leaf = parse.leaf(entry, shared["signature"] if shared else None)
        if shared is None or leaf is None:
            return None
        return cls(**shared, leaf=leaf)
'''

TOY_TEMPLATE = '''{# toy: every leaf scaled; lazy stacks inherit the TensorDict form #}
{% import "common.jinja" as c %}
{% macro tensordict(op) %}
def {{ op.name }}{{ op.signature.text }}:
    {{ op_docstring(op) | indent(4) }}
    leaves, rebuild = self._leaves_and_rebuild()
    return rebuild({{ c.comprehension(op.leaf) }})
{% endmacro %}
'''

TOY_SPEC = """
family: toy
title: Toy ops
doc: A family added by a test.
ops:
  - name: toy_scale
    signature: "(self, factor: float = 2.0) -> Self"
    leaf: "x * factor"
    summary: Every leaf times ``factor``.
    details: A toy.
    example: |
      >>> TensorDict(a=torch.ones(2), batch_size=[2]).toy_scale()["a"]
      tensor([2., 2.])
"""


def render_toy(root: Path, template: str) -> dict[str, str]:
    """The toy family registered (its module and template written under ``root``), its
    spec file rendered, the family forgotten again."""
    import importlib.util

    module_path = root / "toy_family.py"
    module_path.write_text(TOY_FAMILY)
    (root / "toy.jinja").write_text(template)
    spec = importlib.util.spec_from_file_location("toy_family", module_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["toy_family"] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)  # registers the family
        assert "toy" in families()
        (root / "spec").mkdir(exist_ok=True)
        write_spec(root, "toy.yaml", TOY_SPEC)
        return render_spec(load_spec(root / "spec"))
    finally:
        unregister("toy")
        del sys.modules["toy_family"]


def test_a_family_is_a_plug_in(tmp_path: Path) -> None:
    import types

    import torch

    from tensordict import TensorDict

    files = render_toy(tmp_path, TOY_TEMPLATE)
    assert "toy" not in families()
    assert "def toy_scale(self, factor: float = 2.0) -> Self: ..." in files[
        "tensordict/_generated/tensordict_ops.pyi"
    ]
    assert "## `toy_scale`" in files["docs/reference/toy.md"]
    assert "| `toy_scale` | [toy](toy.md#toy_scale) | leaf-wise |" in files["docs/reference/lazy.md"]
    assert "def toy_scale(" in files["tensordict/_generated/tensorclass_ops.py"]
    # the rendered module works: its method scales every leaf of a real TensorDict
    generated = types.ModuleType("toy_generated")
    exec(files["tensordict/_generated/tensordict_ops.py"], vars(generated))
    td = TensorDict(a=torch.ones(2, 3), sub={"b": torch.arange(2)}, batch_size=[2])
    out = generated.TensorDictGeneratedOps.toy_scale(td, 3.0)
    assert type(out) is TensorDict and out.batch_size == td.batch_size
    torch.testing.assert_close(out["a"], torch.full((2, 3), 3.0))
    torch.testing.assert_close(out["sub", "b"], torch.tensor([0.0, 3.0]))


# --------------------------------------------------------------------------------------
# The generator stays small.
# --------------------------------------------------------------------------------------


def test_no_codegen_module_is_over_600_lines() -> None:
    for path in sorted((ROOT / "codegen").rglob("*.py")):
        count = len(path.read_text().splitlines())
        assert count <= 600, f"{path.relative_to(ROOT)} has {count} lines"


def test_the_shared_op_holds_only_what_every_family_has() -> None:
    import dataclasses

    assert len(dataclasses.fields(Op)) <= 12
    for name, op_type in families().items():
        assert issubclass(op_type, Op) and op_type.family == name
        assert dataclasses.is_dataclass(op_type) and op_type.__dataclass_params__.frozen


def test_templates_are_jinja() -> None:
    """Every output file and every family has its Jinja template."""
    templates = ROOT / "codegen" / "templates"
    assert not list(templates.rglob("*.tmpl"))
    for name in families():
        assert (templates / "families" / f"{name}.jinja").is_file(), name
    for name in ("tensordict_ops.py", "lazy_ops.py", "tensorclass_ops.py", "ops.pyi",
                 "torch_functions.py", "functions.py", "reference_family.md"):
        assert (templates / f"{name}.jinja").is_file(), name


# The modules that parse and validate the spec (their strings are messages and tables).
PARSING_MODULES = {"checks.py", "entry.py", "loader.py", "model.py", "parse.py", "signature.py"}
CODE_MARKERS = ("return ", "def ", "leaves", "self._", "torch.")


def code_literals(path: Path) -> list[tuple[int, str]]:
    """Non-docstring string literals (an f-string counting once) holding a marker of
    generated code."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in ast.walk(node) if v is not node)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        else:
            continue
        if any(marker in text for marker in CODE_MARKERS):
            found.append((node.lineno, text))
    return found


def test_generated_code_lives_in_templates() -> None:
    """At most 10 literals of the emitting modules look like generated code (there were
    120 when the code was assembled in Python strings); what is left is prose (the
    docs of rules and results) and names."""
    found = {
        f"{path.relative_to(ROOT)}:{line}": text
        for path in sorted((ROOT / "codegen").rglob("*.py"))
        if path.name not in PARSING_MODULES
        for line, text in code_literals(path)
    }
    assert len(found) <= 10, "\n".join(f"{k}: {v!r}" for k, v in found.items())


MISSPELT = [
    ("{{ op.nmae }}", "nmae"),  # a misspelt attribute
    ("{{ leaf_exrp(op.leaf) }}", "leaf_exrp"),  # a misspelt helper
    ("{{ c.comprehensoin(op.leaf) }}", "comprehensoin"),  # a misspelt macro
    ("{{ c.comprehension(op.leef) }}", "leef"),  # passed on to a macro of common.jinja
]


@pytest.mark.parametrize("wrong, name", MISSPELT)
def test_a_misspelt_template_name_fails_codegen(tmp_path: Path, wrong: str, name: str) -> None:
    """Strict rendering: the error names the template's file:line and the entry's."""
    template = TOY_TEMPLATE.replace("{{ c.comprehension(op.leaf) }}", wrong)
    line = next(i for i, l in enumerate(template.splitlines(), 1) if wrong in l)
    with pytest.raises(SpecError) as info:
        render_toy(tmp_path, template)
    (message,) = info.value.problems
    assert f"toy.jinja:{line}" in message, message  # where it fails, or the caller
    assert name in message, message
    assert "spec/toy.yaml:" in message and "rendering the entry at" in message, message


def test_rendering_is_strict() -> None:
    from codegen.templating import ENV

    assert ENV.undefined is __import__("jinja2").StrictUndefined
    assert ENV.keep_trailing_newline and not ENV.autoescape


def test_jinja2_is_pinned_in_the_dev_extra() -> None:
    """Like black: the templates render the generated files `--check` compares."""
    import tomllib

    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert any(re.fullmatch(r"black==[\d.]+", d) for d in dev)
    assert any(re.fullmatch(r"jinja2==[\d.]+", d) for d in dev), dev
