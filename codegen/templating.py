"""The Jinja environment that renders every generated file (``codegen/templates/``).

Templates hold the text of the generated code; Python hands them values. Each output
file has a template (``tensordict_ops.py.jinja``...); each family has one,
``families/<family>.jinja``, whose macros render that family's forms:

- ``tensordict(op)``: the ``TensorDict`` method (a function for ``method: false`` ops);
- ``inplace(op)``: its in-place variant (called when the op has one);
- ``lazy(op)``: the ``LazyStackedTensorDict`` form (called unless its way is ``inherit``);
- ``forwarder(name, signature, summary, form)``, ``stub(name, signature)``,
  ``reference(op)`` and ``alias(alias)``: the tensorclass forwarder, the stub line, the
  reference entry and an operator dunder; a family that defines none of them gets the
  shared ones of ``common.jinja``.

Rendering is strict: an undefined variable, attribute or macro is an error
(``StrictUndefined``), reported as a :class:`~codegen.model.SpecError` naming the
template's ``file:line`` and the spec entry being rendered. Whitespace: blocks eat their
own line (``trim_blocks``, ``lstrip_blocks``); ``| indent(n)`` indents a multi-line
value's lines after the first and drops its trailing newlines, so a macro's value sits
where the template puts it.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Iterator

import jinja2

from codegen.model import Form, Location, Op, Role, SpecError

TEMPLATES = Path(__file__).parent / "templates"
COMMON = "common.jinja"
# the forms ``common.jinja`` gives a family that does not define them itself
SHARED_FORMS = ("forwarder", "stub", "reference", "alias")


def indent(text: object, width: int = 4) -> str:
    """``text`` without trailing newlines, each non-blank line after the first indented
    by ``width`` (blank lines left empty)."""
    lines = str(text).rstrip("\n").split("\n")
    prefix = " " * width
    return "\n".join(
        [lines[0]] + [prefix + line if line.strip() else "" for line in lines[1:]]
    )


def _family_source(name: str):
    """``families/<family>.jinja`` of a family defined outside ``codegen/families``
    (its op type's ``template_dir``), for the loader."""
    from codegen.families import families

    if not (name.startswith("families/") and name.endswith(".jinja")):
        return None
    op_type = families().get(name[len("families/") : -len(".jinja")])
    folder = getattr(op_type, "template_dir", None)
    if folder is None:
        return None
    path = Path(folder) / f"{op_type.family}.jinja"
    if not path.is_file():
        return None
    mtime = path.stat().st_mtime_ns

    def uptodate() -> bool:  # the same file, unchanged (tests register toy families)
        again = getattr(families().get(op_type.family), "template_dir", None)
        return again is not None and Path(again) / path.name == path and (
            path.is_file() and path.stat().st_mtime_ns == mtime
        )

    return path.read_text(encoding="utf-8"), str(path), uptodate


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [jinja2.FileSystemLoader(TEMPLATES), jinja2.FunctionLoader(_family_source)]
        ),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["indent"] = indent
    env.globals.update(Form=Form, Role=Role)
    return env


ENV = _environment()
_entry: list[Location | str] = []  # what is being rendered now (innermost last)


def _strict(fn):
    """``fn`` refusing undefined arguments: ``leaf_expr(op.leef)`` fails there, naming
    ``leef``, rather than deep inside ``fn``."""
    import functools

    @functools.wraps(fn)
    def call(*args, **kwargs):
        for value in (*args, *kwargs.values()):
            if isinstance(value, jinja2.Undefined):
                value._fail_with_undefined_error()
        return fn(*args, **kwargs)

    return call


def add_globals(**values) -> None:
    """Make ``values`` (helpers computing context, tables) visible to every template;
    a helper called with an undefined argument fails."""
    ENV.globals.update(
        {k: _strict(v) if callable(v) and not isinstance(v, type) else v for k, v in values.items()}
    )


def add_filters(**filters) -> None:
    ENV.filters.update({k: _strict(v) for k, v in filters.items()})


@contextlib.contextmanager
def rendering(what: Location | str) -> Iterator[None]:
    """Errors raised inside name ``what`` (a spec entry's location) as well."""
    _entry.append(what)
    try:
        yield
    finally:
        _entry.pop()


def _template_line(tb) -> str | None:
    """``file:line`` of the innermost template frame of a traceback, followed by the
    template lines that called it (innermost first)."""
    found = []
    while tb is not None:
        template = tb.tb_frame.f_globals.get("__jinja_template__")
        if template is not None:
            path = Path(template.filename or template.name or "?")
            with contextlib.suppress(ValueError):
                path = path.relative_to(TEMPLATES.parent.parent)
            where = f"{path.as_posix()}:{template.get_corresponding_lineno(tb.tb_lineno)}"
            if not found or found[-1] != where:
                found.append(where)
        tb = tb.tb_next
    if not found:
        return None
    callers = [w for w in reversed(found[:-1]) if not w.startswith(f"{found[-1]}")]
    return found[-1] + (f" (called from {', '.join(callers)})" if callers else "")


def _fail(exc: Exception) -> SpecError:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where = f"{exc.filename or exc.name}:{exc.lineno}"
    else:
        where = _template_line(exc.__traceback__) or "codegen/templates"
    entry = f" (rendering the entry at {_entry[-1]})" if _entry else ""
    head, _, called = where.partition(" (called from ")
    called = f" (called from {called}" if called else ""
    return SpecError([f"{head}: {type(exc).__name__}: {exc}{entry}{called}"])


def _guard(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except SpecError:
        raise
    except (jinja2.TemplateError, TypeError, AttributeError, KeyError, ValueError) as exc:
        if _template_line(sys.exc_info()[2]) is None and not isinstance(
            exc, jinja2.TemplateError
        ):
            raise  # not from a template: a bug in codegen's Python
        raise _fail(exc) from exc


def render(template: str, **context) -> str:
    """The template ``codegen/templates/<template>`` rendered with ``context``."""
    return str(_guard(lambda: ENV.get_template(template).render(**context)))


def family_template(op: Op) -> str:
    return f"families/{op.family}.jinja"


def _macro(op: Op, form: str):
    module = ENV.get_template(family_template(op)).module
    macro = getattr(module, form, None)
    if macro is None and form in SHARED_FORMS:
        macro = getattr(ENV.get_template(COMMON).module, form)
    if macro is None:
        raise SpecError(
            [f"codegen/templates/{family_template(op)}: no macro {form!r} "
             f"(rendering the entry at {op.location})"]
        )
    return macro


def form(op: Op, name: str, *args) -> str:
    """The macro ``name`` of ``op``'s family template, called with ``op`` (or ``args``)."""
    with rendering(op.location):
        macro = _guard(_macro, op, name)
        return indent(str(_guard(macro, *(args or (op,)))), 0)
