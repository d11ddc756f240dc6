"""Writing 64 MB files in pieces of different sizes, after a run of earlier files:
ms per file (docs/distributed.md, "Why sustained writing slowed the write() path").

The kernel gives each ``write()`` page-cache folios as large as the piece; on a VM
whose balloon reports free memory to its host, which sizes stay cheap depends on what
the machine wrote before. Every file is kept until the end (like the benchmarks that
keep what they write), then the folder is removed. Needs only torch:

    .venv/bin/python benchmarks/write_pieces.py --prefill 24 --dir /tmp/NAME
    .venv/bin/python benchmarks/write_pieces.py --prefill 56 --prefill-piece 32 --dir /tmp/NAME

Variants: ``W<KiB>`` (``write()`` in pieces of that many KiB), ``map`` (0.15.3's way:
a shared map of the file filled by one copy). Scratch: (prefill + rounds x variants)
x 64 MB.
"""

import argparse
import os
import shutil
import tempfile
import time

import torch

MB64 = 64 << 20


def write_file(path: str, data: memoryview, variant: str) -> None:
    if variant == "map":
        with open(path, "wb") as f:
            f.truncate(MB64)
        block = torch.from_file(path, shared=True, size=MB64, dtype=torch.uint8)
        block.copy_(torch.frombuffer(data, dtype=torch.uint8))
        return
    piece = int(variant[1:]) << 10
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, MB64, piece):
            os.write(fd, data[start : start + piece])
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefill", type=int, default=24, help="files written first")
    parser.add_argument("--prefill-piece", type=int, default=256, help="their KiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default="W256,W32,W16,W4,map")
    parser.add_argument("--dir", default=None, help="scratch folder (removed after)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = memoryview(torch.randn(MB64 // 4).view(torch.uint8).numpy())
    folder = tempfile.mkdtemp(dir=args.dir)
    variants = args.variants.split(",")
    count = 0
    try:
        prefill = f"W{args.prefill_piece}"
        for _ in range(args.prefill):
            count += 1
            write_file(os.path.join(folder, f"f{count}"), data, prefill)
        times: dict = {v: [] for v in variants}
        for _ in range(args.rounds):  # the variants alternate, a file each
            for variant in variants:
                count += 1
                start = time.perf_counter()
                write_file(os.path.join(folder, f"f{count}"), data, variant)
                times[variant].append(round((time.perf_counter() - start) * 1e3))
        for variant, ms in times.items():
            print(f"{variant:>5}: ms per file {ms}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
