"""The optional C extension (tensordict/_fastreads.c: TensorDict's hot dict-like reads).

Everything else is in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler), the install goes on without it and tensordict runs its pure-Python
reads. TENSORDICT_REQUIRE_C=1 makes a failed build an error instead (scripts/setup.sh
and scripts/check_install.sh set it, so that CI always tests the C reads).
"""

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that warns and goes on when the extension does not build."""

    def run(self):
        try:
            super().run()
        except Exception as exc:
            self._give_up(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._give_up(exc)

    def _give_up(self, exc):
        if os.environ.get("TENSORDICT_REQUIRE_C", "") not in ("", "0"):
            raise exc
        print(
            f"WARNING: tensordict's C extension did not build ({exc}); "
            "installing the pure-Python reads"
        )


setup(
    ext_modules=[Extension("tensordict._fastreads", ["tensordict/_fastreads.c"])],
    cmdclass={"build_ext": OptionalBuildExt},
)
