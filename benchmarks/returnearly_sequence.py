"""memmap(new folder, num_threads=32, return_early=True) called N+1 times in a row,
as 0.15.3's ``serialize_weights_returnearly`` does, then N+1 ``torch.save`` of the same
weights (its next case, ``serialize_weights_pickle``): ms per call
(docs/persistence.md, "``return_early`` and 0.15.3's ``serialize_weights_returnearly``").

Each call writes a Transformer's weights (176 MB) to a new folder: N=20 writes 3.7 GB,
removed at the end. Run it with each venv:

    .venv/bin/python benchmarks/returnearly_sequence.py --dir /tmp/NAME
    (cd /tmp && <reference venv>/bin/python <repo>/benchmarks/returnearly_sequence.py --dir /tmp/NAME)
"""

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
import warnings
from pathlib import Path

import torch
from torch import nn
from tensordict import TensorDict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls after the first")
    parser.add_argument("--dir", default=None, help="scratch folder (removed after)")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nn.Transformer's nested-tensor notice
        model = nn.Transformer()
    weights = TensorDict.from_module(model)
    folder = Path(tempfile.mkdtemp(dir=args.dir))
    try:
        futures, times = [], []
        for _ in range(args.calls + 1):
            start = time.perf_counter()
            target = folder / uuid.uuid4().hex
            futures.append(weights.memmap(target, num_threads=32, return_early=True))
            times.append((time.perf_counter() - start) * 1e3)
        print(
            f"return_early: ms per call {[round(t) for t in times]}, "
            f"median of the last {args.calls} {statistics.median(times[1:]):.0f}",
            flush=True,
        )
        time.sleep(0.5)  # the benchmark's pause between cases
        state, path, times = model.state_dict(), folder / "file.t", []
        for _ in range(args.calls + 1):
            start = time.perf_counter()
            torch.save(state, path)
            times.append((time.perf_counter() - start) * 1e3)
        print(
            f"torch.save: ms per call {[round(t) for t in times]}, "
            f"median of the last {args.calls} {statistics.median(times[1:]):.0f}",
            flush=True,
        )
        for future in futures:  # 0.15.3's futures, and ours
            if hasattr(future, "result"):
                future.result()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
