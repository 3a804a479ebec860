"""Facts that more than one rule needs, computed at most once per file and only when a
rule asks (most files never need them): `gradlint.analysis.facts.FileFacts` holds them.

Importing this package imports none of its modules: `gradlint.analysis.project`, which
the cache reads to check a result's dependencies, needs only `ast`, and a run whose files
all come from the cache never loads LibCST."""
