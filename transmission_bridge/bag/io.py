"""
Open rosbag2 bags for reading, and write new ones atomically.

Readers: :func:`open_reader` checks the path and turns every rosbags or storage
error into :class:`BagError` with the path in the message. Writers: an output
bag is written into a hidden temporary folder next to the target and renamed
into place only when it is complete (:func:`atomic_writer`); on any error or
interrupt the temporary folder is removed, so a half-written bag is never left
looking complete. The same messages written twice give the same bytes. Jazzy's
``ros2 bag`` reads what is written here (metadata version 9).
"""

import contextlib
import os
import pathlib
import shutil

from .errors import BagError

STORAGES = ('mcap', 'sqlite3')


def typestore():
    """Return the rosbags type store for ROS 2 Jazzy messages."""
    from rosbags.typesys import get_typestore, Stores
    return get_typestore(Stores.ROS2_JAZZY)


def open_reader(path):
    """Return an opened ``rosbags.rosbag2.Reader`` for ``path``, or raise BagError."""
    from rosbags.rosbag2 import Reader
    path = pathlib.Path(path)
    if not path.exists():
        raise BagError(f'no bag at {str(path)!r}')
    if path.is_file():
        raise BagError(f'{str(path)!r} is a file; a rosbag2 bag is the folder that holds '
                       'metadata.yaml')
    try:
        reader = Reader(path)
        reader.open()
    except Exception as exc:   # noqa: B902 - rosbags raises several unrelated types
        raise BagError(f'cannot read bag {str(path)!r}: {_describe(exc)}') from None
    return reader


def iter_messages(reader, connections=None):
    """Yield ``(connection, timestamp_ns, raw)`` in log-time order; storage errors -> BagError."""
    try:
        for item in reader.messages(connections=connections) if connections is not None \
                else reader.messages():
            yield item
    except BagError:
        raise
    except Exception as exc:   # noqa: B902 - a truncated file fails deep inside the storage
        raise BagError(f'cannot read bag {str(reader.path)!r}: {_describe(exc)}') from None


def _describe(exc):
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


@contextlib.contextmanager
def atomic_writer(path, storage='mcap'):
    """
    Yield an opened ``rosbags.rosbag2.Writer`` that appears at ``path`` only on success.

    Raises BagError if ``path`` exists or the storage is unknown.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    path = pathlib.Path(path)
    if storage not in STORAGES:
        raise BagError(f'unknown storage {storage!r}; use one of {", ".join(STORAGES)}')
    if path.exists():
        raise BagError(f'output {str(path)!r} already exists')
    if not path.parent.exists():
        raise BagError(f'output folder {str(path.parent)!r} does not exist')
    # The bag is written under its final name inside a hidden folder, so the storage file
    # and the metadata rosbags embeds in it name the final bag (and two runs write the same
    # bytes); the rename then moves it into place in one step.
    staging = path.parent / f'.{path.name}.partial-{os.getpid()}'
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    tmp = staging / path.name
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    writer = Writer(tmp, version=9, storage_plugin=plugin)
    try:
        writer.open()
        yield writer
        writer.close()
        os.replace(tmp, path)
        staging.rmdir()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise


def atomic_file(path):
    """Return ``(temporary path, commit)``: write the temporary file, then call ``commit()``."""
    path = pathlib.Path(path)
    tmp = path.parent / f'.{path.name}.partial-{os.getpid()}{path.suffix}'

    def commit():
        os.replace(tmp, path)

    return tmp, commit
