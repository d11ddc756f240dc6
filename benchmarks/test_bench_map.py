"""map() over 100,000 rows with 2 workers, against the same chunks done by hand.

``[td]`` times ``td.map(fn, num_workers=2, ...)``; ``[floor]`` is the same work by hand:
a ``multiprocessing.Pool(2)`` (same start method, one torch thread per worker),
``pool.map`` of the function over the
same chunks of a plain dict of tensors, and one ``torch.cat`` per key. Both start their
pool inside the timed call (``map`` starts one per call). Target: ``[td]`` within 1.2x of
``[floor]``. Two cases: one chunk per worker (the default), and chunks of 10,000 rows
(10 chunks, which ``map`` writes into one memory-mapped output).
"""

import multiprocessing

import pytest
import torch
from tensordict import TensorDict

ROWS = 100_000
CASES = {"default_chunks": None, "chunks_of_10000": 10_000}


def make_source():
    gen = torch.Generator().manual_seed(0)
    return {
        "obs": torch.randn(ROWS, 32, generator=gen),
        "reward": torch.randn(ROWS, 1, generator=gen),
        "done": torch.zeros(ROWS, 1, dtype=torch.bool),
    }


def normalize_td(td):
    obs = td["obs"]
    return td.empty().update(
        {"obs": (obs - obs.mean(-1, keepdim=True)) / 2, "reward": td["reward"] * 0.5}
    )


def normalize_dict(d):
    obs = d["obs"]
    return {"obs": (obs - obs.mean(-1, keepdim=True)) / 2, "reward": d["reward"] * 0.5}


def floor_map(source, chunksize):
    chunksize = chunksize or -(-ROWS // 2)
    chunks = [
        {k: v[start : start + chunksize] for k, v in source.items()}
        for start in range(0, ROWS, chunksize)
    ]
    # one torch thread per worker, as map's worker_threads=1 (a forked worker that uses
    # the parent's OpenMP pool can hang)
    with multiprocessing.get_context(_START).Pool(
        2, torch.set_num_threads, (1,)
    ) as pool:
        results = pool.map(normalize_dict, chunks)
    return {k: torch.cat([r[k] for r in results]) for k in results[0]}


_START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


@pytest.mark.parametrize("case", list(CASES))
def test_map_100000_rows_2_workers(benchmark, impl, case):
    source = make_source()
    chunksize = CASES[case]
    if impl == "td":
        td = TensorDict(source, batch_size=[ROWS])
        got = benchmark.pedantic(
            lambda: td.map(
                normalize_td,
                num_workers=2,
                chunksize=chunksize,
                generator=torch.Generator(),
                mp_start_method=_START,
            ),
            rounds=5,
            warmup_rounds=1,
        )
    else:
        got = benchmark.pedantic(
            floor_map, (source, chunksize), rounds=5, warmup_rounds=1
        )
    expected = normalize_dict(source)
    for key, value in expected.items():
        assert torch.allclose(got[key], value)


def _interleaved(rounds: int, samples: int) -> None:
    """``python benchmarks/test_bench_map.py``: the same two measurements, but ``[td]``
    and ``[floor]`` called alternately (one call each in turn, the order swapped every
    time), so that a busy machine slows both alike; prints every round's median ratio
    td/floor per case (target: <= 1.2)."""
    import statistics
    import time

    source = make_source()
    td = TensorDict(source, batch_size=[ROWS])
    for case, chunksize in CASES.items():
        calls = {
            "td": lambda: td.map(
                normalize_td,
                num_workers=2,
                chunksize=chunksize,
                generator=torch.Generator(),
                mp_start_method=_START,
            ),
            "floor": lambda: floor_map(source, chunksize),
        }
        for call in calls.values():  # warm-up (moves the source to shared memory)
            call()
        for r in range(rounds):
            times = {"td": [], "floor": []}
            for i in range(samples):
                for name in ("td", "floor") if i % 2 == 0 else ("floor", "td"):
                    t0 = time.perf_counter()
                    calls[name]()
                    times[name].append(time.perf_counter() - t0)
            td_ms = statistics.median(times["td"]) * 1e3
            floor_ms = statistics.median(times["floor"]) * 1e3
            ratios = [a / b for a, b in zip(times["td"], times["floor"])]
            print(
                f"{case} round {r + 1}: td {td_ms:.0f} ms, floor {floor_ms:.0f} ms, "
                f"td/floor {td_ms / floor_ms:.2f} (per pair: "
                f"{', '.join(f'{x:.2f}' for x in ratios)})",
                flush=True,
            )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=_interleaved.__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=6)
    args = parser.parse_args()
    _interleaved(args.rounds, args.samples)
