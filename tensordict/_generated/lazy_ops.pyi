# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/lazy_ops.pyi.jinja; do not edit
# The lazy stack's ops have the signatures of TensorDict's (the same spec entries); its
# stub inherits their typed stubs, `Self` being the lazy stack.
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps

__all__ = ["LazyStackedTensorDictGeneratedOps"]

class LazyStackedTensorDictGeneratedOps(TensorDictGeneratedOps): ...
