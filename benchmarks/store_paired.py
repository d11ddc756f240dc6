#!/usr/bin/env python
"""TensorDictStore against the same commands issued by hand with redis-py, paired.

    .venv/bin/python benchmarks/store_paired.py [--rounds 5] [--calls 200]

Issue 29's targets: 64-row reads and writes of a 100,000-row store, and a 1 MB
``to_store``, within 1.5x of the same commands by hand (``test_bench_store.py`` has the
cases; this runs them paired). Both sides run in this one process on one client,
call after call alternately, so that the load of the shared machine hits them alike;
each round takes the median wall time of each side over ``--calls`` calls, and every
round's ratio is printed (ours / by hand: < 1.5 meets the target).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import redis
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tensordict import TensorDict  # noqa: E402
from tensordict.store._server import LocalServer  # noqa: E402
from test_bench_store import (  # noqa: E402
    DTYPES,
    N,
    ROWS,
    SHAPES,
    _by_hand_read_script,
    _by_hand_write_script,
    _values,
)


def _paired(ours, by_hand, calls, cleanup=None):
    times = {"ours": [], "by_hand": []}
    for i in range(calls):
        order = (("ours", ours), ("by_hand", by_hand))
        for name, fn in order if i % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
            if cleanup is not None:
                cleanup()
    return statistics.median(times["ours"]), statistics.median(times["by_hand"])


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    torch.set_num_threads(1)
    with LocalServer() as server:
        client = redis.Redis(port=server.port)
        td = TensorDict(
            {k: torch.zeros((N,) + SHAPES[k], dtype=DTYPES[k]) for k in SHAPES},
            batch_size=[N],
        )
        store = td.to_store(client=client)
        index = torch.randperm(N, generator=torch.Generator().manual_seed(0))[:ROWS]
        value = _values()
        store[index] = value
        big = TensorDict(x=torch.randn(1024, 256), batch_size=[1024])  # 1 MiB
        made = []

        def to_store():
            made.append(big.to_store(client=client))

        def one_set():  # a new key, as to_store makes new keys (the server allocates alike)
            key = f"paired:{{one-set}}:{len(made)}"
            client.set(key, memoryview(big["x"].numpy()).cast("B"))
            made.append(key)

        def cleanup():
            while made:
                item = made.pop()
                if isinstance(item, str):
                    client.delete(item)
                else:  # every key of the store (clear_redis keeps its record)
                    names = item._server.names
                    client.delete(names.meta, names.ver, names.data(("x",)))

        def write():
            store[index] = value

        cases = {
            "read 64 rows": (
                lambda: store[index],
                _by_hand_read_script(client, store, index),
                None,
            ),
            "write 64 rows": (
                write,
                _by_hand_write_script(client, store, index, value),
                None,
            ),
            "to_store 1 MB": (to_store, one_set, cleanup),
        }
        print(
            f"server {server.binary} on {server.address}; {args.calls} calls a side a round"
        )
        for name, (ours, by_hand, clean) in cases.items():
            for _ in range(20):  # warm up
                ours(), by_hand()
                if clean:
                    clean()
            ratios = []
            for r in range(args.rounds):
                t_ours, t_hand = _paired(ours, by_hand, args.calls, clean)
                ratios.append(t_ours / t_hand)
                print(
                    f"{name:14s} round {r}: ours {t_ours * 1e6:8.0f} us, by hand {t_hand * 1e6:8.0f} us, ratio {t_ours / t_hand:.2f}"
                )
            print(
                f"{name:14s} ratios {min(ratios):.2f}-{max(ratios):.2f} (target <= 1.5)"
            )
        store.clear_redis()


if __name__ == "__main__":
    main()
