"""Render the op specs under ``spec/`` into code, stubs and reference docs.

``python -m codegen`` writes what changed; ``python -m codegen --check`` fails on drift.
See ``spec/README.md`` for the schema and ``docs/architecture.md`` for the pipeline:
``codegen/loader.py`` loads a spec file and hands each entry to its family's op type
(``codegen/families/<family>.py``: typed fields, ``parse``, the values its code needs);
``codegen/render.py`` renders the Jinja templates in ``codegen/templates/`` (one per
output file, one per family: ``families/<family>.jinja``) through
``codegen/templating.py``.
"""
