"""consolidate(filename=...) called many times in a row, as 0.15.3's
``consolidate_to_file`` benchmark cases do one after the other: ms per call.

Every file is kept until the end, so the page cache fills with unwritten data and the
kernel's writeback throttling shows (docs/distributed.md). Run it with each venv:

    .venv/bin/python benchmarks/consolidate_file_sustained.py
    (cd /tmp && <reference venv>/bin/python <repo>/benchmarks/consolidate_file_sustained.py)
"""

import argparse
import os
import shutil
import tempfile
import time

import torch
from tensordict import TensorDict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=12, help="calls per case")
    parser.add_argument("--dir", default=None, help="scratch folder (removed after)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    folder = tempfile.mkdtemp(dir=args.dir)
    few_large = TensorDict({f"k{i}": torch.randn(2 * 2**20) for i in range(8)})
    many_small = TensorDict({f"k{i}": torch.randn(2**14) for i in range(1024)})
    cases = [
        ("few_large-0", few_large, 0),
        ("few_large-8", few_large, 8),
        ("many_small-0", many_small, 0),
        ("many_small-8", many_small, 8),
    ]
    count = 0
    try:
        for name, td, threads in cases:
            times = []
            for _ in range(args.calls):
                count += 1
                start = time.perf_counter()
                td.consolidate(
                    filename=os.path.join(folder, f"file{count}.td"),
                    num_threads=threads,
                )
                times.append(round((time.perf_counter() - start) * 1e3))
            print(f"{name}: ms per call {times}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
