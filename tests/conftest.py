"""Fixtures several test files share."""

from __future__ import annotations

import pytest

from tensordict import _modes


def missing_optional(code: str) -> str | None:
    """What an example (a docstring, a guide's block) needs and this machine lacks:
    ``zarr`` for the zarr backend, a Redis server binary and ``redis`` for a store;
    None when it has all it uses. CI has both (scripts/test.sh requires a server), so
    there these examples always run; a machine without them (the GPU machine's image)
    skips them instead of failing."""
    import importlib.util
    import os

    if "zarr" in code and importlib.util.find_spec("zarr") is None:
        return "zarr is not installed"
    if "LocalServer" in code or "to_store" in code or "TensorDictStore(" in code:
        if os.environ.get("TENSORDICT_REQUIRE_REDIS"):
            return None
        if importlib.util.find_spec("redis") is None:
            return "redis (the client) is not installed"
        from tensordict.store._server import server_binary

        if server_binary() is None:
            return "no Redis-compatible server binary"
    return None


@pytest.fixture
def optional_guard():
    """``optional_guard(code)`` skips the test when ``code`` needs what is missing."""

    def guard(code: str) -> None:
        why = missing_optional(code)
        if why:
            pytest.skip(f"this example needs what is missing here: {why}")

    return guard


@pytest.fixture
def restore_modes():
    """Every global mode (``set_lazy_legacy``, the nn settings...) as it was before the
    test, whatever the test switched."""
    saved = {name: setting.value for name, setting in _modes._SETTINGS.items()}
    yield
    for name, value in saved.items():
        _modes._SETTINGS[name].value = value


def pytest_terminal_summary(terminalreporter):
    """Report how many examples the robustness property test ran (issue 14)."""
    import sys

    for name, module in list(sys.modules.items()):
        if name.rsplit(".", 1)[-1] == "test_atomic":
            counts = getattr(module, "EXAMPLES_RUN", None)
            if counts:
                per_kind = ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))
                terminalreporter.write_line(
                    f"robustness property test: {sum(counts.values())} examples "
                    f"({per_kind})"
                )


# ---- the spec-driven tests read spec/*.yaml; the methods they call come from
# tensordict/_generated/. After a YAML edit without `python -m codegen` the two disagree,
# and the tests would fail for reasons that hide the real one ("the oracle accepted no
# case"): they say first that the generated code is stale.

SPEC_DRIVEN = ("test_spec_", "test_persistence_spec")


def stale_generated(root) -> list[str]:
    """The generated files of the checkout ``root`` that differ from what its spec
    renders (``python -m codegen --check``'s list); [] when codegen cannot run here."""
    import sys
    from pathlib import Path

    root = Path(root)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        from codegen.__main__ import plan
        from codegen.model import SpecError
    except ImportError:  # no jinja2/black: codegen's own tests report that
        return []
    try:
        _, changed, missing, extra = plan(root)
    except SpecError as exc:
        return [f"the spec is invalid: {p}" for p in exc.problems]
    return [f"drifted: {r}" for r in changed] + [f"missing: {r}" for r in missing] + [
        f"extra: {r}" for r in extra
    ]


_STALE: dict = {}


@pytest.fixture(autouse=True)
def _generated_code_matches_the_spec(request):
    name = request.module.__name__.rsplit(".", 1)[-1]
    if name.startswith(SPEC_DRIVEN):
        from pathlib import Path

        root = Path(__file__).resolve().parent.parent
        if root not in _STALE:
            _STALE[root] = stale_generated(root)
        if _STALE[root]:
            pytest.fail(
                "the generated code is stale: spec/ and tensordict/_generated/ disagree "
                "(" + "; ".join(_STALE[root]) + "); run `python -m codegen` and rerun "
                "the tests",
                pytrace=False,
            )
    yield
