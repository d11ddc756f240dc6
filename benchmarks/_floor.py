"""The floor: what a careful user writes by hand on (nested) dicts of tensors, shared
by the suites that time a ``[floor]`` beside ``[td]``. Not tensordict code."""


def floor_construct(src, batch):
    """A dict of ``src`` whose every leaf was checked to start with ``batch``."""
    n = len(batch)
    out = {}
    for key, value in src.items():
        if isinstance(value, dict):
            out[key] = floor_construct(value, batch)
        else:
            if value.shape[:n] != batch:
                raise ValueError(f"{key}: bad shape {value.shape}")
            out[key] = value
    return out


def floor_leaf_keys(d, prefix=()):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from floor_leaf_keys(value, prefix + (key,))
        else:
            yield prefix + (key,) if prefix else key


def floor_leaf_items(d, prefix=()):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from floor_leaf_items(value, prefix + (key,))
        else:
            yield (prefix + (key,) if prefix else key), value


def floor_map(d, fn):
    return {k: floor_map(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


def floor_map2(d, other, fn):
    return {
        k: floor_map2(v, other[k], fn) if isinstance(v, dict) else fn(v, other[k])
        for k, v in d.items()
    }


def floor_index(d, idx):
    return {
        k: floor_index(v, idx) if isinstance(v, dict) else v[idx] for k, v in d.items()
    }
