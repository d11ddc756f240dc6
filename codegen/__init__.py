"""Render the op specs under ``spec/`` into code, stubs and reference docs.

``python -m codegen`` writes what changed; ``python -m codegen --check`` fails on drift.
See ``spec/README.md`` for the schema; in code, ``codegen/schema.py`` holds its tables,
``codegen/model.py`` the dataclasses a loaded spec is made of, ``codegen/loader.py``
the loading and validation, ``codegen/render.py`` the rendering.
"""
