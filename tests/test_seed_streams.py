"""Seed 000, "Building tensordicts from streams", run unchanged.

``TUTORIAL`` is the tutorial's code exactly as the seed prints it, the asyncio
``StreamedTensorDict`` subclass of ``LazyStackedTensorDict`` included. Only time is
shortened, and only here: the test runs it with ``asyncio.sleep`` and
``asyncio.wait_for`` scaled by ``TIME_SCALE``, so the streams produce the same number of
values per bucket (about 7 and 3) in a tenth of the time.

What it prints is compared with what the seed prints: the lazy stack's repr and the
densified tensordict's repr exactly (the verbose repr of DESIGN.md, so these comparisons
fail on the reference 0.15.3, which prints a compact repr: an intended divergence); the
streamed values by their structure (consecutive integers; how many arrive in a bucket
depends on timing).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re

import pytest
import torch

TIME_SCALE = 0.1

TUTORIAL = '''
import torch
from tensordict import TensorDict

bucket0 = TensorDict(stream0=torch.randn(5), stream1=torch.randn(4))
bucket1 = TensorDict(stream0=torch.randn(4), stream1=torch.randn(5))

data = TensorDict.lazy_stack([bucket0, bucket1], dim=0)
print(data)

data_select = data.select("stream0")
data_plus_1 = data + 1
data_apply = data.apply(lambda x: x + 1)

assert data[0] is bucket0

data_cont = data.densify()

import asyncio
from typing import List


async def generate_numbers(frequency: float, queue: asyncio.Queue) -> None:
    i = 0
    while True:
        await asyncio.sleep(1 / frequency)
        await queue.put(i)
        i += 1


async def collect_data(queue: asyncio.Queue, timeout: float) -> List[int]:
    values = []

    # We create a nested `collect` async function in order to be able to stop it as
    #  soon as timeout is passed (see wait_for below).
    async def collect():
        nonlocal values
        while True:
            value = await queue.get()
            values.append(value)

    task = asyncio.create_task(collect())
    try:
        await asyncio.wait_for(task, timeout=timeout)
    except asyncio.TimeoutError:
        task.cancel()
    return values


async def wait7hz() -> None:
    queue = asyncio.Queue()
    generate_task = asyncio.create_task(generate_numbers(7, queue))
    collect_data_task = asyncio.create_task(collect_data(queue, timeout=1))
    values = await collect_data_task
    # The ``generate_task`` has not been terminated
    generate_task.cancel()
    print(values)


asyncio.run(wait7hz())

from typing import Callable, Dict

from tensordict import LazyStackedTensorDict, NestedKey, TensorDictBase


class StreamedTensorDict(LazyStackedTensorDict):
    """A lazy stack class that can be built from a dictionary of streams."""

    @classmethod
    async def from_streams(
        cls,
        streams: Dict[NestedKey, Callable],
        timeout: float,
        batch_size: int,
        densify: bool = True,
    ) -> TensorDictBase:
        td = cls(stack_dim=0)

        # We construct a queue for each stream
        queues = [asyncio.Queue() for _ in range(len(streams))]
        tasks = []
        for stream, queue in zip(streams.values(), queues):
            task = asyncio.create_task(stream(queue))
            tasks.append(task)
        for _ in range(batch_size):
            values_tasks = []
            for queue in queues:
                values_task = asyncio.create_task(collect_data(queue, timeout))
                values_tasks.append(values_task)
            values = await asyncio.gather(*values_tasks)
            td.append(TensorDict(dict(zip(streams.keys(), values))))

        # Cancel the generator tasks
        for task in tasks:
            task.cancel()
        if densify:
            return td.densify(layout=torch.strided)
        return td


async def main() -> TensorDictBase:
    def stream0(queue):
        return generate_numbers(frequency=7, queue=queue)

    def stream1(queue):
        return generate_numbers(frequency=3, queue=queue)

    # Running this should take about 10 seconds
    return await StreamedTensorDict.from_streams(
        {"bucket0": stream0, "bucket1": stream1}, timeout=1, batch_size=10
    )


td = asyncio.run(main())

print("TensorDict from stream", td)

print("bucket0 (7Hz, around 70 values)", td["bucket0"].values())
print("bucket1 (3Hz, around 30 values)", td["bucket1"].values())
print("shapes of bucket0 (7Hz, around 70 values)", td["bucket0"]._nested_tensor_size())
'''

SEED_LAZY_REPR = """LazyStackedTensorDict(
    fields={
        stream0: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False),
        stream1: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False)},
    exclusive_fields={
    },
    batch_size=torch.Size([2]),
    device=None,
    is_shared=False,
    stack_dim=0)"""

SEED_STREAM_REPR = """TensorDict from stream TensorDict(
    fields={
        bucket0: Tensor(shape=torch.Size([10, -1]), device=cpu, dtype=torch.int64, is_shared=False),
        bucket1: Tensor(shape=torch.Size([10, -1]), device=cpu, dtype=torch.int64, is_shared=False)},
    batch_size=torch.Size([10]),
    device=None,
    is_shared=False)"""


@contextlib.contextmanager
def _scaled_asyncio():
    """asyncio with its clock scaled by TIME_SCALE (the tutorial's code unchanged)."""
    sleep, wait_for = asyncio.sleep, asyncio.wait_for

    async def scaled_sleep(delay, result=None):
        return await sleep(delay * TIME_SCALE, result)

    async def scaled_wait_for(fut, timeout):
        return await wait_for(fut, None if timeout is None else timeout * TIME_SCALE)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asyncio, "sleep", scaled_sleep)
        patch.setattr(asyncio, "wait_for", scaled_wait_for)
        yield


@pytest.fixture
def fast_asyncio():
    with _scaled_asyncio():
        yield


@pytest.fixture(scope="module")
def tutorial_run():
    """The tutorial, run once: its namespace and what it printed."""
    namespace = {"__name__": "seed_000_streamed_tensordict"}
    out = io.StringIO()
    with _scaled_asyncio(), contextlib.redirect_stdout(out):
        exec(compile(TUTORIAL, "seed_000_streamed_tensordict.py", "exec"), namespace)
    return namespace, out.getvalue()


def _int_list(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def test_tutorial_runs_and_prints_what_the_seed_prints(tutorial_run):
    namespace, out = tutorial_run
    # the lazy stack of the two buckets, printed exactly as the seed shows it
    assert out.startswith(SEED_LAZY_REPR + "\n")
    rest = out[len(SEED_LAZY_REPR) + 1 :]
    # wait7hz: the values read in one second at 7 Hz ([0, 1, 2, 3, 4, 5] in the seed)
    first_line, rest = rest.split("\n", 1)
    values = _int_list(first_line)
    assert values == list(range(len(values))) and 3 <= len(values) <= 8
    # the densified stream, printed exactly as the seed shows it
    assert rest.startswith(SEED_STREAM_REPR + "\n")
    assert "bucket0 (7Hz, around 70 values) tensor([" in rest
    assert "bucket1 (3Hz, around 30 values) tensor([" in rest
    assert "shapes of bucket0 (7Hz, around 70 values) tensor([[" in rest


def test_streamed_values(tutorial_run):
    namespace, _ = tutorial_run
    td = namespace["td"]
    bucket0, bucket1 = td["bucket0"], td["bucket1"]
    assert bucket0.is_nested and bucket0.layout == torch.strided
    # each stream's values arrive in order, bucket after bucket: 0, 1, 2, ...
    for nested, low, high in ((bucket0, 35, 85), (bucket1, 10, 45)):
        flat = nested.values()
        assert torch.equal(flat, torch.arange(flat.numel()))
        assert low <= flat.numel() <= high
    sizes = bucket0._nested_tensor_size()
    assert sizes.shape == (10, 1) and int(sizes.sum()) == bucket0.values().numel()


def test_the_tutorials_objects(tutorial_run):
    namespace, _ = tutorial_run
    data, bucket0 = namespace["data"], namespace["bucket0"]
    LazyStackedTensorDict = namespace["LazyStackedTensorDict"]
    assert data[0] is bucket0
    assert isinstance(namespace["data_select"], LazyStackedTensorDict)
    assert list(namespace["data_select"].keys()) == ["stream0"]
    assert torch.equal(namespace["data_plus_1"][0]["stream1"], bucket0["stream1"] + 1)
    assert torch.equal(
        namespace["data_apply"][1]["stream0"], namespace["bucket1"]["stream0"] + 1
    )
    dense = namespace["data_cont"]
    assert dense["stream0"].is_nested
    assert torch.equal(dense["stream0"].unbind()[0], bucket0["stream0"])


def test_streamed_tensordict_without_densify(fast_asyncio):
    namespace = {"__name__": "seed_000_streamed_tensordict"}
    source = TUTORIAL.split("async def main()")[0]
    source = source.replace("asyncio.run(wait7hz())", "")
    source = source.replace("print(data)", "")
    exec(compile(source, "seed_000_streamed_tensordict.py", "exec"), namespace)
    StreamedTensorDict = namespace["StreamedTensorDict"]

    async def run():
        return await StreamedTensorDict.from_streams(
            {"a": lambda q: namespace["generate_numbers"](7, q)},
            timeout=1,
            batch_size=3,
            densify=False,
        )

    td = asyncio.run(run())
    assert type(td) is StreamedTensorDict and td.batch_size == (3,)
    # -1 where the buckets got different numbers of values (timing decides)
    assert re.match(
        r"StreamedTensorDict\(\n    fields={\n        a: Tensor\(shape=torch.Size\(\[3, (-1|\d+)\]\)",
        repr(td),
    )
    assert td.get("a", as_list=True)[0].dtype == torch.int64
