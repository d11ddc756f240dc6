"""Render the op specs under ``spec/`` into code, stubs and reference docs.

``python -m codegen`` writes what changed; ``python -m codegen --check`` fails on drift.
See ``spec/README.md`` for the schema and ``codegen/model.py`` for its validation.
"""
