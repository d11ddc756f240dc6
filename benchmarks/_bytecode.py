"""Both libraries imported from bytecode, as a ``pip install`` leaves them.

``pip install`` writes every module's ``.pyc``; an editable install (``scripts/setup.sh``)
writes none, and with ``PYTHONDONTWRITEBYTECODE=1`` (set on this machine, and by
``compare.py`` for the runs) no import writes them either. Then each run compiles this
package's sources again, and compiling a module as large as the generated
``tensordict_ops.py`` frees ~6 MB of parse trees back into the heap: glibc later places
small growing buffers (``torch.save`` into a ``BytesIO``) in those holes, where each
``realloc`` copies. Measured with ``import_effect.py``: ``torch.save`` of a small state
dict 6-20 % slower after importing the package from source than from bytecode, which
was itself equal to not importing it. So the scripts that time one library against the
other compile both first.
"""

from __future__ import annotations

import subprocess

_COMPILE = (
    "import compileall, os, sys, tensordict\n"
    "ok = compileall.compile_dir(os.path.dirname(tensordict.__file__), quiet=1)\n"
    "sys.exit(0 if ok else 1)\n"
)


def compile_package(python: str, env: dict, cwd: str) -> None:
    """Write the ``.pyc`` of the ``tensordict`` that ``python`` imports (from ``cwd``,
    in ``env``); a no-op where they are up to date."""
    proc = subprocess.run(
        [python, "-c", _COMPILE], cwd=cwd, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"could not byte-compile the tensordict of {python}:\n"
            f"{proc.stdout}{proc.stderr}"
        )
