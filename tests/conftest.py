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
