"""Quick start: the seed documents' examples of the tensordict core, run as a script.

    python demo/quickstart.py          # every example, with its code and its output
    python demo/quickstart.py -q       # one line per example

Each example below is one code sample of the seed documents (the package description
"001", the pre-allocation tutorial "003", the overview "004", the streams tutorial "000"),
copied unchanged into a function. The script shows each example's code, runs it, prints
what it prints, and compares that output with the output the seed document shows where the
seed shows one. It exits with status 1 if any example fails.

``tests/test_seeds.py`` imports this module and runs the same examples under pytest, so the
examples are written once, here.

Lines after a ``# -- ... --`` comment are the demo's own: they print the results and
check what the seed's text says about them.

Where a seed sample needs something to run that the seed defines elsewhere (a ``data``
from an earlier block, ``N``), the example gets it from a ``setup`` example or from a
module-level definition; the two places where a sample cannot run as printed are marked
``SEED FIX`` with the reason.

Samples that need what is not built yet are left out here; ``tests/test_seeds.py`` lists
them. Samples that run only once another branch lands are registered with ``xfail=`` (the
reason): they must fail until then (``main`` reports them as expected failures, and as a
failure once they pass, so that the mark is removed).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import io
import sys
import textwrap
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
from tensordict import TensorDict

# ---------------------------------------------------------------------------------------
# The registry: one Example per seed code sample
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    name: str  # the function's name
    seed: str  # "001", "003", ...
    section: str  # the seed's section heading
    func: Callable[..., Any]
    expected_output: Optional[str]  # what the seed prints, or None if it prints nothing
    setup: Optional[Callable[[], Any]]  # runs first (silently); its result is the argument
    requires_cuda: bool
    # why the sample cannot run yet (it must then fail: tests/test_seeds.py marks it
    # xfail(strict=True), and main() reports an unexpected pass as a failure)
    xfail: Optional[str] = None


EXAMPLES: list[Example] = []


def example(
    seed, section, *, expected_output=None, setup=None, requires_cuda=False, xfail=None
):
    """Register the decorated function as the example for one seed code sample."""

    def register(func):
        EXAMPLES.append(
            Example(
                name=func.__name__,
                seed=seed,
                section=section,
                func=func,
                expected_output=expected_output,
                setup=setup,
                requires_cuda=requires_cuda,
                xfail=xfail,
            )
        )
        return func

    return register


def _result_of(func: Callable[..., Any]) -> Any:
    """Call ``func`` after its own setup (if it is a registered example), silently."""
    registered = next((ex for ex in EXAMPLES if ex.func is func), None)
    args = ()
    if registered is not None and registered.setup is not None:
        args = (_result_of(registered.setup),)
    with contextlib.redirect_stdout(io.StringIO()):
        return func(*args)


def run_example(ex: Example, check_output: bool = True) -> str:
    """Run one example and return what it printed.

    Raises whatever the example raises (a failed ``assert`` of the seed included), and,
    with ``check_output``, an AssertionError with a diff when the printed output differs
    from the seed's.
    """
    arg = (_result_of(ex.setup),) if ex.setup is not None else ()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        ex.func(*arg)
    printed = buffer.getvalue()
    if check_output and ex.expected_output is not None and printed != ex.expected_output:
        diff = "\n".join(
            difflib.unified_diff(
                ex.expected_output.splitlines(),
                printed.splitlines(),
                "printed by the seed",
                "printed here",
                lineterm="",
            )
        )
        raise AssertionError(
            f"{ex.name}: the output differs from the seed's:\n{diff}\n"
            f"--- full output here ---\n{printed}"
        )
    return printed


def _expected(text: str) -> str:
    """A seed's printed block, as ``print`` writes it (dedented, one trailing newline)."""
    return textwrap.dedent(text).strip("\n") + "\n"


# What the seeds print, in the verbose repr that DESIGN.md settles on. Seed 003 prints
# exactly this form; seed 001 prints the pre-allocated tensordict in an older form
# (`Tensor(torch.Size([10, 3]), dtype=torch.float32)`), shown here translated to the
# verbose one, with the nesting and indentation the seed shows.
SEED003_FILLED = _expected(
    """
    TensorDict(
        fields={
            a: Tensor(shape=torch.Size([10, 3]), device=cpu, dtype=torch.float32, is_shared=False),
            b: Tensor(shape=torch.Size([10, 3, 4]), device=cpu, dtype=torch.float32, is_shared=False)},
        batch_size=torch.Size([10, 3]),
        device=None,
        is_shared=False)
    """
)
SEED003_EMPTY = _expected(
    """
    TensorDict(
        fields={
        },
        batch_size=torch.Size([10, 3]),
        device=None,
        is_shared=False)
    """
)
SEED001_PREALLOCATED = _expected(
    """
    TensorDict(
        fields={
            a: Tensor(shape=torch.Size([10, 3]), device=cpu, dtype=torch.float32, is_shared=False),
            b: TensorDict(
                fields={
                    c: Tensor(shape=torch.Size([10, 2]), device=cpu, dtype=torch.float32, is_shared=False)},
                batch_size=torch.Size([10]),
                device=None,
                is_shared=False)},
        batch_size=torch.Size([10]),
        device=None,
        is_shared=False)
    """
)


# ---------------------------------------------------------------------------------------
# Seed 001: the package description
# ---------------------------------------------------------------------------------------


@example("001", "General features")
def seed001_general():
    data = TensorDict({
        "key 1": torch.ones(3, 4, 5),
        "key 2": torch.zeros(3, 4, 5, dtype=torch.bool),
    }, batch_size=[3, 4])
    # -- what it gives --
    print("batch_size:", data.batch_size)
    print("keys:", sorted(data.keys()))
    return data


@example("001", "General features: a device for every entry", requires_cuda=True)
def seed001_cuda_device():
    data = TensorDict({
        "key 1": torch.ones(3, 4, 5),
        "key 2": torch.zeros(3, 4, 5, dtype=torch.bool),
    }, batch_size=[3, 4], device="cuda:0")
    data["key 3"] = torch.randn(3, 4, device="cpu")
    # SEED FIX: the seed writes `assert data["key 3"].device is torch.device("cuda:0")`,
    # which no library can satisfy: torch.device objects are not interned
    # (`torch.device("cuda:0") is torch.device("cuda:0")` is False). Compared with ==.
    assert data["key 3"].device == torch.device("cuda:0")
    print("data['key 3'].device:", data["key 3"].device)
    return data


@example("001", "General features: nested keys", setup=seed001_general)
def seed001_nested_keys(data):
    data["nested", "key"] = torch.zeros(3, 4) # the batch-size must match
    data["nested", ("supernested", ("key",))] = torch.zeros(3, 4) # the batch-size must match
    assert (data["nested", "supernested", "key"] == 0).all()
    assert (("nested",), "supernested", (("key",),)) in data.keys(include_nested=True)  # this works too!
    # -- what it gives --
    print("nested keys:", sorted(map(str, data.keys(include_nested=True))))


@example("001", "General features: non-tensor data")
def seed001_non_tensor():
    data = TensorDict({"a-tensor": torch.randn(1, 2)}, batch_size=[1, 2])
    data["non-tensor"] = "a string!"
    assert data["non-tensor"] == "a string!"
    # -- what it gives --
    print("data['non-tensor']:", repr(data["non-tensor"]))


@example("001", "Tensor-like features: indexing", setup=seed001_general)
def seed001_indexing(data):
    sub_tensordict = data[..., :2]
    assert sub_tensordict.shape == torch.Size([3, 2])
    assert sub_tensordict["key 1"].shape == torch.Size([3, 2, 5])
    # -- what it gives --
    print("sub_tensordict.shape:", sub_tensordict.shape)
    print("sub_tensordict['key 1'].shape:", sub_tensordict["key 1"].shape)


def _float_data():
    # SEED FIX: the seed applies `tensor.uniform_()` to the `data` of its previous block,
    # whose "key 2" is a bool tensor: torch has no uniform_ for bool, so that line fails
    # with any library. It runs here on a float-only tensordict.
    return TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4])


@example("001", "Tensor-like features: apply", setup=_float_data)
def seed001_apply(data):
    tensordict_uniform = data.apply(lambda tensor: tensor.uniform_())
    # -- what it gives --
    print("tensordict_uniform['key 1'] in [0, 1):",
          bool(((tensordict_uniform["key 1"] >= 0) & (tensordict_uniform["key 1"] < 1)).all()))


@example("001", "Tensor-like features: apply as a filter")
def seed001_apply_filter():
    data = TensorDict({"a": torch.tensor(1.0, dtype=torch.float), "b": torch.tensor(1, dtype=torch.int64)}, [])
    data_float = data.apply(lambda x: x if x.dtype == torch.float else None) # contains only the "a" key
    assert "b" not in data_float
    # -- what the seed's comment says --
    assert list(data_float.keys()) == ["a"]
    print("data_float keys:", list(data_float.keys()))


@example("001", "Functional programming: hierarchical weights (unflatten_keys)")
def seed001_unflatten_keys():
    from torch import nn
    layer1 = nn.Linear(3, 4)
    layer2 = nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    # we represent the weights hierarchically
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(".")
    # -- the seed compares these with TensorDict.from_module(model) (a later issue);
    #    the flat state dict of the whole model, unflattened, is the same tree --
    params = TensorDict(model.state_dict(), []).unflatten_keys(".")
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    print("unflattened keys:", sorted(map(str, params.keys(include_nested=True))))


N = 10  # the seeds' "when N = 10"


def foo():
    data = TensorDict({}, batch_size=[])
    data["a"] = torch.randn(3)
    data["b"] = TensorDict({"c": torch.zeros(2)}, batch_size=[])
    return data


@example("001", "Lazy preallocation", expected_output=SEED001_PREALLOCATED)
def seed001_lazy_preallocation():
    data = TensorDict({}, batch_size=[N])
    for i in range(N):
        data[i] = foo()
    print(data)  # the seed shows this tensordict "when N = 10"


@example("001", "Nesting TensorDicts: flatten_keys")
def seed001_flatten_keys():
    data = TensorDict({
        "key 1": torch.ones(3, 4, 5),
        "key 2": TensorDict({"sub-key": torch.randn(3, 4, 5, 6)}, batch_size=[3, 4, 5])
    }, batch_size=[3, 4])
    tensordict_flatten = data.flatten_keys(separator=".")
    sub_value = data["key 2", "sub-key"]
    # -- what the seed's text says: a single level with keys "key 1" and "key 2.sub-key" --
    assert set(tensordict_flatten.keys()) == {"key 1", "key 2.sub-key"}
    assert tensordict_flatten["key 2.sub-key"] is sub_value
    print("flat keys:", sorted(tensordict_flatten.keys()))
    print("sub_value.shape:", sub_value.shape)


# ---------------------------------------------------------------------------------------
# Seed 003: the pre-allocation tutorial
# ---------------------------------------------------------------------------------------


def make_tensordict():
    return TensorDict({"a": torch.rand(3), "b": torch.rand(3, 4)}, [3])


@example("003", "Pre-allocating memory: the old import path")
def seed003_import_path():
    from tensordict.tensordict import TensorDict as OldPathTensorDict
    import tensordict

    # the seed imports `from tensordict.tensordict import TensorDict`; the rest of this
    # module uses `from tensordict import TensorDict`: both must be the same class
    assert OldPathTensorDict is tensordict.TensorDict
    print("tensordict.tensordict.TensorDict is tensordict.TensorDict:", True)


@example("003", "Pre-allocating memory: the loop", expected_output=SEED003_FILLED)
def seed003_loop():
    N = 10
    tensordict = TensorDict({}, batch_size=[N, 3])

    for i in range(N):
        tensordict[i] = make_tensordict()

    print(tensordict)


@example("003", "Pre-allocating memory: an empty tensordict", expected_output=SEED003_EMPTY)
def seed003_empty():
    N = 10
    tensordict = TensorDict({}, batch_size=[N, 3])
    print(tensordict)
    return tensordict


@example("003", "Pre-allocating memory: the first write allocates",
         expected_output=SEED003_FILLED, setup=seed003_empty)
def seed003_first_write(tensordict):
    random_tensordict = make_tensordict()
    tensordict[0] = random_tensordict

    assert (tensordict[1:] == 0).all()
    assert (tensordict[0] == random_tensordict).all()

    print(tensordict)
    return tensordict


@example("003", "Pre-allocating memory: later writes are in place",
         setup=seed003_first_write)
def seed003_in_place_writes(tensordict):
    a = tensordict["a"]
    random_tensordict = make_tensordict()
    tensordict[1] = random_tensordict

    # the same tensor is stored under "a", but the values have been updated
    assert tensordict["a"] is a
    assert (tensordict[:2] != 0).all()
    # -- what it gives --
    print('tensordict["a"] is a:', tensordict["a"] is a)


# ---------------------------------------------------------------------------------------
# Seed 004: the overview
# ---------------------------------------------------------------------------------------


@example("004", "Motivation: an int batch size, flat and nested")
def seed004_motivation():
    td = TensorDict(
        {"a": torch.randn(3, 11), "b": torch.randn(3, 3)}, batch_size=3
    )
    regular_dict = {"a": td["a"], "b": td["b"]}
    td = TensorDict(
        {"a": {"c": torch.randn(3, 11)}, "b": torch.randn(3, 3)}, batch_size=3
    )
    regular_dict = {"a": {"c": td["a", "c"]}, "b": td["b"]}
    # -- what it gives --
    assert td.batch_size == torch.Size([3]) and td["a"].batch_size == torch.Size([3])
    print("td.batch_size:", td.batch_size, "| td['a'].batch_size:", td["a"].batch_size)


@example("004", "Features")
def seed004_features():
    tensordict = TensorDict(
        {"zeros": torch.zeros(2, 3, 4), "ones": torch.ones(2, 3, 4, 5)},
        batch_size=[2, 3],
    )
    zeros = tensordict["zeros"]
    tensordict["twos"] = 2 * torch.ones(2, 3)
    sub_tensordict = tensordict[..., :2]
    # -- what it gives --
    assert sub_tensordict.batch_size == torch.Size([2, 2])
    assert sub_tensordict["ones"].shape == torch.Size([2, 2, 4, 5])
    print("sub_tensordict.batch_size:", sub_tensordict.batch_size)
    print("sub_tensordict['twos']:", sub_tensordict["twos"].tolist())


@example("004", "Nested TensorDicts")
def seed004_nested():
    tensordict = TensorDict(
        {
            "inputs": {
                "image": torch.rand(100, 28, 28),
                "mask": torch.randint(2, (100, 28, 28), dtype=torch.uint8)
            },
            "outputs": {"logits": torch.randn(100, 10)},
        },
        batch_size=[100],
    )
    image = tensordict["inputs", "image"]
    logits = tensordict.get(("outputs", "logits"))  # alternative way to access
    tensordict["outputs", "probabilities"] = torch.sigmoid(logits)
    # -- what it gives: the nested dictionaries became nested TensorDicts --
    assert isinstance(tensordict["inputs"], TensorDict)
    assert tensordict["outputs"].batch_size == torch.Size([100])
    assert torch.equal(tensordict["outputs", "probabilities"], torch.sigmoid(logits))
    print("outputs keys:", sorted(tensordict["outputs"].keys()))
    print("image.shape:", image.shape)


@example("004", "Lazy pre-allocation", expected_output=SEED001_PREALLOCATED)
def seed004_lazy_preallocation():
    tensordict = TensorDict({}, batch_size=[N])
    for i in range(N):
        tensordict[i] = foo()
    print(tensordict)


# ---------------------------------------------------------------------------------------
# Seed 000: the streams tutorial (its first block only: keyword construction)
# ---------------------------------------------------------------------------------------


@example("000", "Keyword construction")
def seed000_keyword_construction():
    bucket0 = TensorDict(stream0=torch.randn(5), stream1=torch.randn(4))
    bucket1 = TensorDict(stream0=torch.randn(4), stream1=torch.randn(5))
    # -- what it gives --
    assert bucket0.batch_size == torch.Size([]) and bucket1["stream1"].shape == (5,)
    print("bucket0 keys:", sorted(bucket0.keys()), "| batch_size:", bucket0.batch_size)


# ---------------------------------------------------------------------------------------
# The op catalogue, tensorclasses and lazy stacks (seeds 000, 001, 004)
# ---------------------------------------------------------------------------------------


def _two_tensordicts():
    return [TensorDict({
        "key 1": torch.ones(3, 4, 5),
        "key 2": torch.zeros(3, 4, 5, dtype=torch.bool),
    }, batch_size=[3, 4]) for _ in range(2)]


@example("001", "Tensor-like features: stack and cat", setup=_two_tensordicts)
def seed001_stack_cat(tensordicts):
    stack_tensordict = torch.stack(tensordicts, 1)
    assert stack_tensordict.shape == torch.Size([3, 2, 4])
    assert stack_tensordict["key 1"].shape == torch.Size([3, 2, 4, 5])
    cat_tensordict = torch.cat(tensordicts, 0)
    assert cat_tensordict.shape == torch.Size([6, 4])
    assert cat_tensordict["key 1"].shape == torch.Size([6, 4, 5])
    # -- what it gives --
    print("stack:", stack_tensordict.shape, "| cat:", cat_tensordict.shape)


@example("001", "Tensor-like features: view, reshape, unsqueeze")
def seed001_view_reshape():
    data = TensorDict({
        "key 1": torch.ones(3, 4, 5),
        "key 2": torch.zeros(3, 4, 5, dtype=torch.bool),
    }, batch_size=[3, 4])
    print(data.view(-1))
    print(data.reshape(-1))
    print(data.unsqueeze(-1))
    # -- what the seed's output lines say (it shows only the batch sizes) --
    assert data.view(-1).batch_size == torch.Size([12])
    assert data.reshape(-1).batch_size == torch.Size([12])
    assert data.unsqueeze(-1).batch_size == torch.Size([3, 4, 1])


@example("001", "Lazy preallocation: stacking the calls")
def seed001_stack_calls():
    N = 10
    data = torch.stack([foo() for _ in range(N)])
    # -- what it gives: the same layout as the pre-allocated one --
    assert data.batch_size == torch.Size([10]) and data["b", "c"].shape == (10, 2)
    print("batch_size:", data.batch_size, "| ('b', 'c'):", data["b", "c"].shape)


@example("001", "TensorClass")
def seed001_tensorclass():
    from tensordict.prototype import tensorclass
    import torch

    @tensorclass
    class MyData:
       image: torch.Tensor
       mask: torch.Tensor
       label: torch.Tensor

       def mask_image(self):
           return self.image[self.mask.expand_as(self.image)].view(*self.batch_size, -1)

       def select_label(self, label):
           return self[self.label == label]

    images = torch.randn(100, 3, 64, 64)
    label = torch.randint(10, (100,))
    mask = torch.zeros(1, 64, 64, dtype=torch.bool).bernoulli_().expand(100, 1, 64, 64)

    data = MyData(images, mask, label=label, batch_size=[100])

    print(data.select_label(1))
    print(data.mask_image().shape)
    print(data.reshape(10, 10))
    # -- what it gives (sizes depend on the random labels and mask, as in the seed) --
    assert data.reshape(10, 10).batch_size == torch.Size([10, 10])


@example("004", "Motivation: unbind", setup=lambda: TensorDict(
    {"a": {"c": torch.randn(3, 11)}, "b": torch.randn(3, 3)}, batch_size=3))
def seed004_unbind(td):
    td0, td1, td2 = td.unbind(0)
    # -- what it gives --
    assert td1["a", "c"].shape == (11,) and td2.batch_size == torch.Size([])
    print("td0 keys:", sorted(map(str, td0.keys(include_nested=True))))


@example("004", "Features: reshape", setup=lambda: TensorDict(
    {"zeros": torch.zeros(2, 3, 4), "ones": torch.ones(2, 3, 4, 5)}, batch_size=[2, 3]))
def seed004_reshape(tensordict):
    tensordict = tensordict.reshape(6)
    # -- what it gives --
    assert tensordict["ones"].shape == (6, 4, 5)
    print("batch_size:", tensordict.batch_size)


@example("004", "Lazy evaluation (under set_lazy_legacy(True), as DESIGN.md decides)")
def seed004_lazy_evaluation():
    from tensordict import set_lazy_legacy

    with set_lazy_legacy(True):
        tensordicts = [TensorDict({
            "a": torch.rand(10),
            "b": torch.rand(10, 1000, 1000)}, [10])
            for _ in range(3)]
        stacked = torch.stack(tensordicts, 0)  # no stacking happens here
        stacked_a = stacked["a"]  # we stack the a values, b values are not stacked
        stacked["a"] = torch.zeros_like(stacked["a"])
        assert (tensordicts[0]["a"] == 0).all()
    # -- what it gives --
    print("stacked is a", type(stacked).__name__, "| stacked_a.shape:", stacked_a.shape)


SEED000_LAZY = _expected(
    """
    LazyStackedTensorDict(
        fields={
            stream0: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False),
            stream1: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False)},
        exclusive_fields={
        },
        batch_size=torch.Size([2]),
        device=None,
        is_shared=False,
        stack_dim=0)
    """
)


@example("000", "Stacking heterogeneous tensordicts", expected_output=SEED000_LAZY)
def seed000_lazy_stack():
    bucket0 = TensorDict(stream0=torch.randn(5), stream1=torch.randn(4))
    bucket1 = TensorDict(stream0=torch.randn(4), stream1=torch.randn(5))
    data = TensorDict.lazy_stack([bucket0, bucket1], dim=0)
    print(data)
    data_select = data.select("stream0")
    data_plus_1 = data + 1
    data_apply = data.apply(lambda x: x + 1)
    assert data[0] is bucket0
    data_cont = data.densify()
    # -- (silent: the seed prints only the lazy stack) --
    assert data_cont["stream0"].is_nested and data_plus_1[1] is not bucket1


# ---------------------------------------------------------------------------------------
# Data on disk: memory-mapped tensordicts and MemoryMappedTensor (seeds 001, 002)
# ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _scratch_folder():
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="tensordict-demo-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@example("001", "Parameter serialization and datasets: a dataset on disk (memmap_like)")
def seed001_memmap_dataset():
    with _scratch_folder() as scratch:
        # SEED FIX: the seed writes to the placeholder "/path/to/dataset"; a scratch
        # folder here (the files are sparse: 49 GB of zeros take no disk until written).
        dataset_path = scratch + "/path/to/dataset"
        # allocate memory of the dataset on disk
        data = TensorDict({
            "images": torch.zeros((128, 128, 3), dtype=torch.uint8),
            "labels": torch.zeros((), dtype=torch.int)}, batch_size=[])
        data = data.expand(1000000)
        data = data.memmap_like(dataset_path)
        # ==> Fill your dataset here
        # Let's get 3 items of our dataset:
        data[torch.tensor([1, 10000, 500000])]  # This is much faster than loading the 3 images independently
        # -- what it gives --
        items = data[torch.tensor([1, 10000, 500000])]
        assert data.is_memmap() and data.batch_size == torch.Size([1000000])
        assert items.batch_size == torch.Size([3]) and items["images"].shape == (3, 128, 128, 3)
        print("dataset:", data.batch_size, "| 3 items:", items["images"].shape,
              "| images stored in", type(data["images"]).__name__)


@example("001", "Parameter serialization and datasets: model weights (memmap, load_memmap)")
def seed001_parameter_serialization():
    from torch import nn
    with _scratch_folder() as scratch:
        # SEED FIX: the seed's "/path/to/saved/folder/" is a placeholder; the same path
        # under a scratch folder here.
        folder = scratch + "/path/to/saved/folder/"
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 3))
        params = TensorDict.from_module(model)
        params.memmap(folder, num_threads=16)  # adjust num_threads for speed
        # load params
        params = TensorDict.load_memmap(folder, num_threads=16)
        params.to_module(model)  # load onto model
        params["0"].to_module(model[0])  # load on a slice of the model
        # in the latter case we could also have loaded only the slice we needed
        params0 = TensorDict.load_memmap(folder + "0", num_threads=16)
        params0.to_module(model[0])  # load on a slice of the model
        # -- what it gives: the model runs on the weights mapped from the files --
        assert torch.equal(model[0].weight, params0["weight"])
        print("layer 0 weight:", tuple(model[0].weight.shape), "mapped from",
              type(params0["weight"]).__name__)


def process_data(data):
    images = data.get("images").flip(-2).clone()
    labels = data.get("labels") // 10
    # we update the td inplace
    data.set_("images", images)  # flip image
    data.set_("labels", labels)  # cluster labels


@example("001", "Preprocessing with TensorDict.map")
def seed001_map_preprocessing():
    import tempfile
    from tensordict import MemoryMappedTensor  # noqa: F401  (the seed imports it)
    with _scratch_folder() as scratch:
        # SEED FIX: `data` is the dataset of the sample above, 8 items instead of
        # 1,000,000 here (4 workers flip every image one at a time), in a scratch folder.
        data = TensorDict({
            "images": torch.zeros((128, 128, 3), dtype=torch.uint8),
            "labels": torch.zeros((), dtype=torch.int)}, batch_size=[])
        data = data.expand(8)
        data = data.memmap_like(scratch + "/path/to/dataset")
        # ==> Fill your dataset here
        data["images"].copy_(torch.randint(0, 255, (8, 128, 128, 3), dtype=torch.uint8))
        data["labels"].copy_(torch.arange(8, dtype=torch.int) * 10)
        before = data["images"].clone()
        # SEED FIX: the seed guards this line with `if __name__ == "__main__":` at the
        # top level of its script (so that spawned workers do not run it again); here it
        # runs in this function, which only the main process calls.
        # create data_preproc here
        data_preproc = data.map(process_data, num_workers=4, chunksize=0, pbar=True)  # process 1 images at a time
        # -- what it gives: process_data wrote into the files; it returns nothing --
        assert data_preproc is None
        assert torch.equal(data["images"], before.flip(-2))
        assert torch.equal(data["labels"], torch.arange(8, dtype=torch.int))
        print("images flipped in place:", torch.equal(data["images"], before.flip(-2)),
              "| labels:", data["labels"].tolist())


@example("002", "Memory-mapped tensors")
def seed002_memory_mapped_tensor():
    from tensordict import MemoryMappedTensor
    # SEED FIX: the seed writes `dtype=torch.unint8`, a typo (torch has no `unint8`):
    # torch.uint8 here. The 691 GB tensor lives in an unnamed sparse file: only the
    # pages that are read or written cost anything.
    my_images = MemoryMappedTensor.empty((1_000_000, 3, 480, 480), dtype=torch.uint8)
    mini_batch = my_images[:10]  # just reads the first 10 images of the dataset
    # -- what it gives --
    assert mini_batch.shape == (10, 3, 480, 480) and type(mini_batch) is MemoryMappedTensor
    print("my_images:", tuple(my_images.shape), "| mini_batch:", tuple(mini_batch.shape))
# tensordict.nn and parameters as tensordicts (seeds 001, 002, 004)
# ---------------------------------------------------------------------------------------

# Seed 004 uses these names without importing them in its samples.
from torch import nn  # noqa: E402
from tensordict.nn import TensorDictSequential  # noqa: E402



@example("001", "Functional programming: from_module and to_module")
def seed001_from_module_to_module():
    from torch import nn
    from tensordict import TensorDict
    import torch
    from torch import vmap
    layer1 = nn.Linear(3, 4)
    layer2 = nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    params = TensorDict.from_module(model)
    # we represent the weights hierarchically
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(".")
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    # Let's use our functional module
    x = torch.randn(10, 3)
    with params.to_module(model):
        out = model(x)
    # -- the sample's first half (its vmap half is the next example); what it gives --
    assert params["0", "weight"] is layer1.weight
    assert torch.allclose(out, model(x))
    zeros = params.detach().clone().zero_()
    with zeros.to_module(model):
        assert (model(x) == 0).all()
    assert model[0].weight is layer1.weight  # restored on exit
    print("params keys:", sorted(map(str, params.keys(True, True))))


@example("001", "Functional programming: vmap over stacked parameters",
         expected_output="torch.Size([2, 10, 4])\n")
def seed001_functional_vmap():
    from torch import nn
    from tensordict import TensorDict
    import torch
    from torch import vmap
    layer1 = nn.Linear(3, 4)
    layer2 = nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    params = TensorDict.from_module(model)
    # we represent the weights hierarchically
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(".")
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    # Let's use our functional module
    x = torch.randn(10, 3)
    with params.to_module(model):
        out = model(x)
    # an ensemble of models: we stack params along the first dimension...
    params_stack = torch.stack([params, params], 0)
    # ... and use it as an input we'd like to pass through the model
    def func(x, params):
        with params.to_module(model):
            return model(x)
    y = vmap(func, (None, 0))(x, params_stack)
    print(y.shape)


@example("002", "TensorDict as a context manager: to_module")
def seed002_to_module_context():
    # -- the snippet's `module` and `x`, which the seed leaves undefined --
    module = nn.Linear(3, 4)
    x = torch.randn(2, 3)
    weight = module.weight
    # -- the snippet --
    params = TensorDict.from_module(module).clone()
    params.zero_()
    with params.to_module(module):
        y = module(x)
    # -- what the text says: populated inside the block, reset after it --
    assert (y == 0).all()
    assert module.weight is weight and (module.weight != 0).any()
    print("y inside the block:", y.abs().sum().item(), "| weight restored:", module.weight is weight)


@example("004", "TensorDictModule")
def seed004_tensordictmodule():
    from tensordict.nn import TensorDictModule
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.LazyLinear(1)

        def forward(self, x):
            logits = self.linear(x)
            return logits, torch.sigmoid(logits)
    module = TensorDictModule(
        Net(),
        in_keys=["input"],
        out_keys=[("outputs", "logits"), ("outputs", "probabilities")],
    )
    tensordict = TensorDict({"input": torch.randn(32, 100)}, [32])
    tensordict = module(tensordict)
    # outputs can now be retrieved from the tensordict
    logits = tensordict["outputs", "logits"]
    probabilities = tensordict.get(("outputs", "probabilities"))
    # -- what it gives --
    assert logits.shape == (32, 1) and torch.allclose(probabilities, logits.sigmoid())
    print("keys:", sorted(map(str, tensordict.keys(True, True))))
    return module


@example("004", "TensorDictModule: keyword tensors", setup=seed004_tensordictmodule)
def seed004_tensordictmodule_kwargs(module):
    tensordict = module(input=torch.randn(32, 100))
    # -- "which will return a TensorDict identical to the one in the previous code box" --
    assert isinstance(tensordict, TensorDict) and tensordict.batch_size == (32,)
    assert tensordict["outputs", "logits"].shape == (32, 1)
    print(type(tensordict).__name__, "| batch_size:", tensordict.batch_size,
          "| keys:", sorted(map(str, tensordict.keys(True, True))))


@example("004", "TensorDictSequential")
def seed004_tensordictsequential():
    from tensordict.nn import TensorDictModule
    class Net(nn.Module):
        def __init__(self, input_size=100, hidden_size=50, output_size=10):
            super().__init__()
            self.fc1 = nn.Linear(input_size, hidden_size)
            self.fc2 = nn.Linear(hidden_size, output_size)

        def forward(self, x):
            x = torch.relu(self.fc1(x))
            return self.fc2(x)

    class Masker(nn.Module):
        def forward(self, x, mask):
            return torch.softmax(x * mask, dim=1)
    net = TensorDictModule(
        Net(), in_keys=[("input", "x")], out_keys=[("intermediate", "x")]
    )
    masker = TensorDictModule(
        Masker(),
        in_keys=[("intermediate", "x"), ("input", "mask")],
        out_keys=[("output", "probabilities")],
    )
    module = TensorDictSequential(net, masker)
    tensordict = TensorDict(
        {
            "input": TensorDict(
                {"x": torch.rand(32, 100), "mask": torch.randint(2, size=(32, 10))},
                batch_size=[32],
            )
        },
        batch_size=[32],
    )
    tensordict = module(tensordict)
    intermediate_x = tensordict["intermediate", "x"]
    probabilities = tensordict["output", "probabilities"]
    # -- what the text says: in_keys / out_keys, and select_subsequence --
    assert module.in_keys == [("input", "x"), ("input", "mask")]
    assert module.out_keys == [("intermediate", "x"), ("output", "probabilities")]
    sub = module.select_subsequence(out_keys=[("intermediate", "x")])
    assert len(sub) == 1 and sub[0] is net
    assert len(module.select_subsequence(in_keys=[("input", "x"), ("input", "mask")])) == 2
    assert probabilities.shape == (32, 10)
    print("in_keys:", module.in_keys)
    print("out_keys:", module.out_keys)
    print("select_subsequence(out_keys=[('intermediate', 'x')]):", len(sub), "module")


@example("004", "Functional Programming: make_functional")
def seed004_make_functional():
    from torch import nn
    from tensordict import TensorDict
    from tensordict.nn import make_functional
    import torch
    from functorch import vmap
    layer1 = nn.Linear(3, 4)
    layer2 = nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    # we represent the weights hierarchically
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(separator=".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(separator=".")
    params = make_functional(model)
    # params provided by make_functional match state_dict:
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    # Let's use our functional module
    x = torch.randn(10, 3)
    out = model(x, params=params)  # params is the last arg (or kwarg)
    # -- the sample's first half (its vmap half is the next example); what it gives --
    assert out.shape == (10, 4)
    assert torch.allclose(model(x, params), out)  # params as the last positional arg
    print("out:", out.shape)


@example("004", "Functional Programming: vmap over stacked parameters",
         expected_output="torch.Size([2, 10, 4])\n")
def seed004_functional_vmap():
    from torch import nn
    from tensordict import TensorDict
    from tensordict.nn import make_functional
    import torch
    from functorch import vmap
    layer1 = nn.Linear(3, 4)
    layer2 = nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    # we represent the weights hierarchically
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(separator=".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(separator=".")
    params = make_functional(model)
    # params provided by make_functional match state_dict:
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    # Let's use our functional module
    x = torch.randn(10, 3)
    out = model(x, params=params)  # params is the last arg (or kwarg)
    # an ensemble of models: we stack params along the first dimension...
    params_stack = torch.stack([params, params], 0)
    # ... and use it as an input we'd like to pass through the model
    y = vmap(model, (None, 0))(x, params_stack)
    print(y.shape)


# ---------------------------------------------------------------------------------------
# The script
# ---------------------------------------------------------------------------------------

_SEED_TITLES = {
    "000": "Building tensordicts from streams (tutorial)",
    "001": "The package description",
    "003": "Pre-allocating memory with TensorDict (tutorial)",
    "002": "The API reference page",
    "004": "Overview",
}


def _code_of(func) -> str:
    lines = inspect.getsource(func).splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    return textwrap.dedent("\n".join(lines[start + 1 :]))


def main(argv: list[str]) -> int:
    quiet = "-q" in argv
    cuda = torch.cuda.is_available()
    failed, skipped, expected_failures = [], [], []
    seed = None
    for ex in sorted(EXAMPLES, key=lambda ex: ex.seed):  # stable: seed order kept
        if not quiet and ex.seed != seed:
            seed = ex.seed
            title = f"Seed {seed}: {_SEED_TITLES[seed]}"
            print(f"\n{'=' * len(title)}\n{title}\n{'=' * len(title)}")
        if ex.requires_cuda and not cuda:
            skipped.append(ex.name)
            print(f"[skipped] {ex.seed} {ex.section}: needs CUDA, none available")
            continue
        if not quiet:
            print(f"\n--- {ex.section}\n")
            if ex.setup is not None:
                param = next(iter(inspect.signature(ex.func).parameters))
                print(f"    # `{param}` is the result of {ex.setup.__name__}()")
            print(textwrap.indent(_code_of(ex.func), "    "))
        try:
            printed = run_example(ex)
        except Exception:
            if ex.xfail is not None:
                expected_failures.append(ex.name)
                error = traceback.format_exc().strip().splitlines()[-1]
                print(f"[expected failure] {ex.seed} {ex.section}: {ex.xfail}\n  {error}")
                continue
            failed.append(ex.name)
            print(f"\n[FAILED] {ex.seed} {ex.section}\n{traceback.format_exc()}")
            continue
        if ex.xfail is not None:
            failed.append(ex.name)
            print(
                f"[FAILED] {ex.seed} {ex.section}: passes although marked as expected to "
                f"fail ({ex.xfail}); remove the mark"
            )
            continue
        if not quiet:
            print("output:")
            print(textwrap.indent(printed, "    "), end="")
        check = " (output matches the seed's)" if ex.expected_output is not None else ""
        print(f"[ok] {ex.seed} {ex.section}{check}")
    ran = len(EXAMPLES) - len(skipped) - len(expected_failures)
    print(
        f"\n{ran - len(failed)}/{ran} examples passed"
        + (f", {len(skipped)} skipped (no CUDA)" if skipped else "")
        + (
            f", {len(expected_failures)} expected to fail (not runnable yet)"
            if expected_failures
            else ""
        )
    )
    if failed:
        print("failed:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
