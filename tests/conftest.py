"""Fixtures several test files share."""

from __future__ import annotations

import pytest

from tensordict import _modes


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
