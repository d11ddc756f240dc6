"""The examples of docs/nn.md and of the docstrings of tensordict.nn (and of the
module-state methods every container has) run as doctests."""

import doctest
import importlib
from pathlib import Path

import pytest
import torch

from tensordict import TensorDict

ROOT = Path(__file__).resolve().parent.parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

MODULES = [
    "tensordict._module_state",
    "tensordict.nn.common",
    "tensordict.nn.sequence",
    "tensordict.nn.probabilistic",
    "tensordict.nn._interaction",
    "tensordict.nn.params",
    "tensordict.nn.utils",
    "tensordict.nn.functional_modules",
    "tensordict.nn.ensemble",
    "tensordict.nn.tensorclass_module",
    "tensordict.nn.distributions.continuous",
    "tensordict.nn.distributions.discrete",
    "tensordict.nn.distributions.truncated_normal",
    "tensordict.nn.distributions.composite",
]


def test_docs_nn_md():
    torch.manual_seed(0)
    result = doctest.testfile(
        str(ROOT / "docs" / "nn.md"), module_relative=False, optionflags=FLAGS
    )
    assert result.attempted > 20
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    torch.manual_seed(0)
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, extraglobs={"torch": torch, "TensorDict": TensorDict}, optionflags=FLAGS
    )
    assert result.failed == 0
