"""Every ``set_*`` switch (the tensordict modes and the nn settings) is one mechanism,
``tensordict._modes._ModeSwitch``: blocks nest and restore on exit, also when they
raise; decorators apply only while the function runs; ``.set()`` / ``.unset()``;
``thread_local=True`` confines a value to its thread. The switch-specific behaviour
(a plain ``set_lazy_legacy(True)`` call sets the mode) is in tests/test_compat.py."""

from __future__ import annotations

import threading

import pytest

import tensordict
from tensordict import _modes
from tensordict.nn import (
    InteractionType,
    composite_lp_aggregate,
    interaction_type,
    set_composite_lp_aggregate,
    set_interaction_type,
    set_skip_existing,
    skip_existing,
)


pytestmark = pytest.mark.usefixtures("restore_modes")  # tests/conftest.py


# (switch, reader, two distinct modes)
SWITCHES = [
    (tensordict.set_lazy_legacy, tensordict.lazy_legacy, (True, False)),
    (tensordict.set_list_to_stack, tensordict.list_to_stack, (False, True)),
    (tensordict.set_capture_non_tensor_stack, tensordict.capture_non_tensor_stack, (True, False)),
    (set_skip_existing, skip_existing, (True, False)),
    (set_composite_lp_aggregate, composite_lp_aggregate, (True, False)),
    (set_interaction_type, interaction_type, (InteractionType.MODE, InteractionType.RANDOM)),
]
IDS = [switch.__name__ for switch, _, _ in SWITCHES]


def test_one_mechanism():
    for switch, _, _ in SWITCHES:
        assert issubclass(switch, _modes._ModeSwitch)
        assert _modes._SETTINGS[switch._setting.name] is switch._setting


@pytest.mark.parametrize("switch, read, modes", SWITCHES, ids=IDS)
def test_blocks_nest_and_restore_on_errors(switch, read, modes):
    first, second = modes
    before = read()
    with switch(first):
        assert read() == first
        with pytest.raises(ZeroDivisionError):
            with switch(second):
                assert read() == second
                1 / 0
        assert read() == first
    assert read() == before


@pytest.mark.parametrize("switch, read, modes", SWITCHES, ids=IDS)
def test_decorator_and_set_unset(switch, read, modes):
    first, second = modes
    with switch(second):
        if switch is not set_skip_existing:  # its decorator wraps forward(module, td)

            @switch(first)
            def inside():
                return read()

            assert read() == second
            assert inside() == first and inside() == first
            assert read() == second
        lasting = switch(first)
        lasting.set()
        assert read() == first
        lasting.unset()
        assert read() == second


@pytest.mark.parametrize(
    "switch, read, modes", [s for s in SWITCHES if not s[0]._applies_when_made],
    ids=[i for i, s in zip(IDS, SWITCHES) if not s[0]._applies_when_made],
)
def test_thread_local_values_stay_in_their_thread(switch, read, modes):
    first, second = modes
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def worker():
        with switch(first, thread_local=True):
            seen["worker"] = read()
            entered.set()
            release.wait(10)
        seen["worker after"] = read()

    with switch(second):
        thread = threading.Thread(target=worker)
        thread.start()
        assert entered.wait(10)
        seen["main"] = read()  # the worker's value does not leak here
        release.set()
        thread.join(10)
    assert seen == {"worker": first, "main": second, "worker after": second}


def test_torchrl_import_call_after_a_plain_call():
    tensordict.set_lazy_legacy(True)
    tensordict.set_lazy_legacy(False).set()  # what `import torchrl` runs
    assert tensordict.lazy_legacy() is False
