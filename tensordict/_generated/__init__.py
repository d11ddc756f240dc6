# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/generated_init.py.jinja; do not edit
"""Code rendered from ``spec/`` by ``python -m codegen``; edit the spec, not these files."""

from tensordict._generated.tensordict_ops import TensorDictGeneratedOps

__all__ = ["TensorDictGeneratedOps"]
