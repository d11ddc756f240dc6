"""``tensordict.nn``: modules that read and write tensordicts by key.

The module path exists so that imports resolve; ``TensorDictModule`` and
``TensorDictSequential`` are built in their own issue.
"""
