"""Sphinx extension: the guides' pictures, drawn at build time from code (matplotlib).

Each picture is drawn from a real tensordict built here, so it shows what the library
does: ``batch_dims.svg`` (the batch dims every entry of a nested tensordict shares, and
each entry's own feature dims) and ``lazy_stack.svg`` (two tensordicts whose entries
differ in shape, stacked lazily: nothing is copied, the differing dim reads ``-1``).
They are written to ``docs/_generated_images/`` (ignored by git) before the pages are
read; the pages link them as ``_generated_images/NAME.svg``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

BATCH, FEATURE, TEXT, MUTED = "#4c72b0", "#dd8452", "#222222", "#777777"


def _cells(ax, x, y, sizes, colours, w=0.55, h=0.5):
    for i, (size, colour) in enumerate(zip(sizes, colours)):
        ax.add_patch(Rectangle((x + i * w, y), w * 0.92, h, color=colour, alpha=0.85))
        ax.text(x + i * w + w * 0.46, y + h / 2, str(size), ha="center", va="center",
                color="white", fontsize=10, fontweight="bold")


def draw_batch_dims(path: Path) -> None:
    import torch
    from tensordict import TensorDict

    td = TensorDict(
        obs=torch.zeros(4, 3, 84),
        reward=torch.zeros(4, 3, 1),
        next=TensorDict(obs=torch.zeros(4, 3, 84), done=torch.zeros(4, 3, dtype=torch.bool),
                        batch_size=[4, 3]),
        batch_size=[4, 3],
    )
    rows = []  # (depth, key, shape or None for a nested tensordict)
    def walk(t, depth):
        for key in sorted(t.keys()):
            value = t.get(key)
            if isinstance(value, TensorDict):
                rows.append((depth, key + "/", None, value.batch_size))
                walk(value, depth + 1)
            else:
                rows.append((depth, key, tuple(value.shape), None))
    walk(td, 0)
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * (len(rows) + 2.2)))
    nb = td.batch_dims
    ax.text(0, len(rows) + 0.9, f"TensorDict(batch_size={list(td.batch_size)})",
            fontsize=11, family="monospace", color=TEXT, va="center")
    for i, (depth, key, shape, bs) in enumerate(rows):
        y = len(rows) - 1 - i
        ax.text(0.3 + 0.45 * depth, y + 0.25, key, fontsize=10, family="monospace",
                va="center", color=TEXT)
        if shape is None:
            _cells(ax, 3.0, y, list(bs), [BATCH] * len(bs))
            ax.text(3.0 + 0.55 * len(bs) + 0.2, y + 0.25, "a nested tensordict: same batch dims",
                    fontsize=9, va="center", color=MUTED)
        else:
            _cells(ax, 3.0, y, shape, [BATCH] * nb + [FEATURE] * (len(shape) - nb))
    ax.add_patch(Rectangle((3.0, -0.7), 0.3, 0.3, color=BATCH))
    ax.text(3.4, -0.55, "batch dims: shared by every entry (indexing, reshaping act here)",
            fontsize=9, va="center")
    ax.add_patch(Rectangle((3.0, -1.3), 0.3, 0.3, color=FEATURE))
    ax.text(3.4, -1.15, "feature dims: each entry's own", fontsize=9, va="center")
    ax.set_xlim(0, 9.5)
    ax.set_ylim(-1.5, len(rows) + 1.3)
    ax.axis("off")
    fig.savefig(path, bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)


def draw_lazy_stack(path: Path) -> None:
    import torch
    from tensordict import TensorDict

    members = [
        TensorDict(obs=torch.zeros(3, 4), reward=torch.zeros(3), batch_size=[3]),
        TensorDict(obs=torch.zeros(3, 6), reward=torch.zeros(3), batch_size=[3]),
    ]
    stack = TensorDict.lazy_stack(members, dim=0)
    fig, ax = plt.subplots(figsize=(7.6, 3.3))
    for m, td in enumerate(members):
        x = 0.2 + m * 2.9
        ax.add_patch(FancyBboxPatch((x, 1.3), 2.6, 1.7, boxstyle="round,pad=0.05",
                                    fc="#f3f3f3", ec=MUTED))
        ax.text(x + 0.1, 2.75, f"tensordicts[{m}], batch {list(td.batch_size)}",
                fontsize=8.5, family="monospace")
        for r, key in enumerate(sorted(td.keys())):
            shape = tuple(td[key].shape)
            ax.text(x + 0.1, 2.25 - r * 0.6, key, fontsize=9, family="monospace", va="center")
            _cells(ax, x + 1.0, 2.0 - r * 0.6, shape, [BATCH] + [FEATURE] * (len(shape) - 1),
                   w=0.42, h=0.45)
    ax.add_patch(FancyBboxPatch((0.05, 1.15), 5.65, 2.05, boxstyle="round,pad=0.05",
                                fc="none", ec=BATCH, lw=1.5, ls="--"))
    ax.text(0.1, 0.85, f"TensorDict.lazy_stack(tds, dim=0): batch_size={list(stack.batch_size)}, "
            "nothing copied", fontsize=9, color=BATCH, family="monospace")
    shape = tuple(stack.get_item_shape("obs"))
    ax.text(0.1, 0.35, 'stack.get_item_shape("obs")', fontsize=9, family="monospace")
    _cells(ax, 3.3, 0.12, shape, [BATCH, BATCH, FEATURE], w=0.42, h=0.45)
    ax.text(4.7, 0.35, "-1: the members differ", fontsize=9, color=MUTED, va="center")
    ax.text(0.1, -0.25, 'stack[1] is tensordicts[1]; stack["reward"] stacks on reading',
            fontsize=9, family="monospace", color=MUTED)
    ax.set_xlim(0, 7.6)
    ax.set_ylim(-0.5, 3.3)
    ax.axis("off")
    fig.savefig(path, bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)


PICTURES = {"batch_dims.svg": draw_batch_dims, "lazy_stack.svg": draw_lazy_stack}


def draw_all(app) -> None:
    out = Path(app.srcdir) / "_generated_images"
    out.mkdir(exist_ok=True)
    plt.rcParams["svg.hashsalt"] = "tensordict"  # the same bytes at every build
    for name, draw in PICTURES.items():
        draw(out / name)


def setup(app) -> dict:
    app.connect("builder-inited", draw_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
