"""JSONL traces written by trainers and sessions (docs/traces.md)."""

from collections.abc import Iterable, Mapping, Sequence
import os


SCHEMA: str = 'spiraltorch.trace'

VERSION: int = 1

class TraceWriter:
    """
    TraceWriter(path, source, *, append=False, overwrite=False): writes trace events to a JSONL file, one whole line per write (docs/traces.md). An existing file is refused unless append=True (add to it) or overwrite=True (replace it).
    """

    def __init__(self, path: str | bytes | os.PathLike[str] | os.PathLike[bytes], source: str, *, append: bool = False, overwrite: bool = False) -> None: ...

    def write(self, event: str, *, step: int | None = None, epoch: int | None = None, metrics: Mapping[str, float] | Iterable[tuple[str, float]] | None = None, config: Mapping[str, float] | Iterable[tuple[str, float]] | None = None, notes: Sequence[str] | None = None, timestamp: float | None = None) -> None:
        """
        Writes one event; metrics and config are mappings (or iterables of (name, number) pairs); a timestamp of None stamps the current time.
        """

    @property
    def path(self) -> str:
        """The trace file's path."""

    @property
    def source(self) -> str:
        """The writer's source name, recorded in every event."""

    @property
    def events_written(self) -> int:
        """Events written so far by this writer."""
