"""The import of other agents' transcripts: it plans, parses, indexes and stores.

It coordinates the layers below it: the parsers (:mod:`core.sources`), full-content
search (:mod:`core.search`) and the store (:mod:`core.store`). See docs/import.md.

- ``importer``  the incremental scan: stat, plan, parse, commit in batches, report
- ``report``    the pydantic report and progress models

This package's ``__init__`` stays import-free: the panel's first frame imports the
report's models, not the importer's process pool.
"""
