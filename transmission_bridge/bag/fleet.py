"""
Fleet conversion: many bags converted in parallel on Dask, and one summary row per bag.

Each bag is one Dask task running :func:`~transmission_bridge.bag.convert.convert_bag`
unchanged (so an output is byte for byte what converting that bag alone writes),
followed by :func:`summarize`, which reduces the conversion to one row of plain
numbers. A task never raises for a bad bag: the row says ``failed`` and why, and
the other bags go on. The engine is an embedded ``LocalCluster`` (one single-threaded
worker process per core: a worker holds one bag at a time) or, given an address, an
existing Dask cluster whose workers see the same file system.

Resuming: a bag is converted into a staging folder under ``OUT_DIR/.fleet``, its
row written to ``OUT_DIR/.fleet/<bag>.json`` (atomically), and the bag then moved
into place; a rerun (or Dask's rerun of a task whose worker died after finishing)
takes the row instead of converting again. The staging folders of tasks that were
interrupted or whose worker died are removed when the run ends.
"""

import dataclasses
import json
import logging
import os
import pathlib
import shutil
import signal
import time

import numpy as np

from .errors import BagError

MARKERS = '.fleet'      # per-bag summary rows: the proof that a bag's output is complete
STATUS_CONVERTED = 'converted'
STATUS_EARLIER = 'converted earlier'
STATUS_FAILED = 'failed'


@dataclasses.dataclass(frozen=True)
class Job:
    """One bag to convert: where it is, where its output goes, and how to name it."""

    source: pathlib.Path
    output: pathlib.Path
    robot: str
    bag: str
    output_dir: pathlib.Path

    @property
    def marker(self):
        """Return the path of this bag's summary row (exists once its output is complete)."""
        return self.output_dir / MARKERS / f'{self.bag}.json'


def find_jobs(inputs, output_dir):
    """
    Expand ``inputs`` (bag folders, or folders holding bags at any depth) into jobs.

    A bag given directly is written to ``output_dir/<its name>``; bags found under a
    folder keep their path relative to it (``fleet/robot7/run1`` -> ``OUT/robot7/run1``),
    and the robot is the first folder of that path. Raises BagError for an input that
    does not exist or holds no bag, and when two inputs would be written to one output.
    """
    output_dir = pathlib.Path(output_dir)
    out_resolved = output_dir.resolve()
    jobs = []
    for given in inputs:
        path = pathlib.Path(given)
        if not path.exists():
            raise BagError(f'no bag or folder at {str(given)!r}')
        if path.is_file() or (path / 'metadata.yaml').exists():
            jobs.append(Job(path, output_dir / path.name, path.resolve().parent.name, path.name,
                            output_dir))
            continue
        found = sorted(m.parent for m in path.rglob('metadata.yaml')
                       if not _hidden_or_inside(m.parent, path, out_resolved))
        if not found:
            raise BagError(f'{str(given)!r} holds no bag (no metadata.yaml below it)')
        for bag in found:
            rel = bag.relative_to(path)
            robot = rel.parts[0] if len(rel.parts) > 1 else path.resolve().name
            jobs.append(Job(bag, output_dir / rel, robot, rel.as_posix(), output_dir))
    seen = {}
    for job in jobs:
        if job.output in seen:
            raise BagError(f'{str(seen[job.output].source)!r} and {str(job.source)!r} would '
                           f'both be written to {str(job.output)!r}; give their parent folder '
                           'instead, so each keeps its path')
        seen[job.output] = job
    return jobs


def _hidden_or_inside(folder, root, out_resolved):
    rel = folder.relative_to(root)
    if any(part.startswith('.') for part in rel.parts):
        return True
    resolved = folder.resolve()
    return resolved == out_resolved or out_resolved in resolved.parents


# --- one bag ----------------------------------------------------------------------------
def convert_one(job, tset, model, options):
    """
    Convert one bag and return its summary row; a failure is a row, never an exception.

    The task may run twice: Dask reruns a task whose worker died before its result was
    collected, possibly after the bag was done. So the bag is converted in a staging
    folder under ``OUT_DIR/.fleet``, its row written, and only then moved into place; a
    rerun that finds row and output returns the row.
    """
    from .convert import convert_bag
    started = time.perf_counter()
    done = _stored_row(job)
    if done is not None:
        return done
    row = {'robot': job.robot, 'bag': job.bag, 'input': str(job.source),
           'output': str(job.output), 'status': STATUS_FAILED, 'error': ''}
    staging_root = job.output_dir / MARKERS / f'staging-{os.getpid()}-{time.time_ns()}'
    staging = staging_root / job.bag
    try:
        if job.output.exists():
            raise BagError(f'output {str(job.output)!r} already exists')
        staging.parent.mkdir(parents=True)
        result = convert_bag(job.source, staging, tset, model, options['topic'],
                             options['joint_states_topic'], options['gravity_topic'],
                             options['storage'], None, options['keep_input'],
                             options['commands_topic'])
        row.update(summarize(result, options['stale_timeout']))
        row['status'] = STATUS_CONVERTED
        row['seconds'] = time.perf_counter() - started
        job.output.parent.mkdir(parents=True, exist_ok=True)
        _write_json(job.marker, row)
        os.replace(staging, job.output)
    except Exception as exc:   # noqa: B902 - any failure is this bag's, reported in its row
        row['status'] = STATUS_FAILED
        row['error'] = str(exc) if isinstance(exc, (BagError, OSError)) else \
            f'{type(exc).__name__}: {exc}'
        job.marker.unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging_root, ignore_errors=True)
    return row


def _stored_row(job):
    """Return the row stored for a complete output of ``job``, or None."""
    try:
        row = json.loads(job.marker.read_text())
    except (OSError, ValueError):
        return None
    return row if (job.output / 'metadata.yaml').exists() else None


def summarize(result, stale_timeout):
    """
    Reduce a :class:`~transmission_bridge.bag.convert.Conversion` to one row of numbers.

    ``duration_s`` spans the actuator states' log times; a stale gap is a pause
    between two consecutive actuator states longer than ``stale_timeout`` (s), what
    the live bridge would report as stale actuators. Per joint: the position range
    and, with a model, the largest magnitude of the holding torque.
    """
    times = result.actuator_log_times
    gaps = np.diff(times) * 1e-9 if times is not None and len(times) > 1 else np.zeros(0)
    row = {
        'duration_s': float((times[-1] - times[0]) * 1e-9) if len(gaps) else 0.0,
        'messages': int(result.messages_in),
        'actuator_states': int(result.actuator_messages),
        'joint_states': int(result.joint_states),
        'rejected': int(result.rejected),
        'non_finite': int(result.non_finite),
        'refused_linkage': int(result.refused_linkage),
        'stale_gaps': int((gaps > stale_timeout).sum()),
        'longest_gap_s': float(gaps.max()) if len(gaps) else 0.0,
    }
    positions = result.joint_positions
    for k, name in enumerate(result.joint_names):
        col = positions[:, k] if positions is not None and len(positions) else np.zeros(0)
        col = col[np.isfinite(col)]
        row[f'{name}/min_position'] = float(col.min()) if len(col) else None
        row[f'{name}/max_position'] = float(col.max()) if len(col) else None
    if result.holding_torques is not None:
        for k, name in enumerate(result.holding_names):
            col = np.abs(result.holding_torques[:, k])
            row[f'{name}/max_holding_torque'] = float(col.max()) if len(col) else None
    return row


def _write_json(path, row):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f'.{path.name}.partial-{os.getpid()}'
    tmp.write_text(json.dumps(row))
    os.replace(tmp, path)


def earlier_row(job):
    """Return the row of a bag converted by an earlier run, or None (output incomplete)."""
    row = _stored_row(job)
    if row is not None:
        row['status'] = STATUS_EARLIER
    return row


def remove_partial_outputs(jobs):
    """Remove what interrupted tasks left: staging folders and ``.<name>.partial-<pid>``."""
    roots = {job.output_dir / MARKERS for job in jobs}
    for root in roots:
        if root.is_dir():
            for leftover in root.glob('staging-*'):
                shutil.rmtree(leftover, ignore_errors=True)
    for job in jobs:
        parent = job.output.parent
        if parent.is_dir():
            for leftover in parent.glob(f'.{job.output.name}.partial-*'):
                shutil.rmtree(leftover, ignore_errors=True)


# --- the engine ---------------------------------------------------------------------------
# Embedded workers run one conversion at a time; two Dask defaults serve other workloads:
# the statistical profiler (a stack sample every 10 ms, for a dashboard not started here)
# and MALLOC_TRIM_THRESHOLD_, which, set at all, turns off glibc's adaptive mmap threshold
# (mallopt(3)), so each large array of a bag would be a fresh mmap. Both are off.
WORKER_CONFIG = {'distributed.worker.profile.enabled': False,
                 'distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_': None}


class Engine:
    """A Dask client: on an embedded LocalCluster, or on the scheduler at ``address``."""

    def __init__(self, workers=None, address=None):
        import dask
        from dask.distributed import Client, LocalCluster
        self.cluster = None
        if address:
            try:
                self.client = Client(address, timeout='10s')
            except (OSError, TimeoutError) as exc:
                raise BagError(f'cannot reach the Dask scheduler at {address!r}: {exc}') \
                    from None
            try:
                self.client.wait_for_workers(1, timeout=30)
            except TimeoutError:
                self.client.close()
                raise BagError(f'the Dask scheduler at {address!r} has no workers (waited '
                               '30 s); start some with: dask worker ' + address) from None
            return
        # Worker processes ignore Ctrl-C (inherited); the main process cancels them.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            with dask.config.set(WORKER_CONFIG):
                self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                            threads_per_worker=1, processes=True,
                                            dashboard_address=None,
                                            silence_logs=logging.CRITICAL)
        finally:
            signal.signal(signal.SIGINT, previous)
        self.client = Client(self.cluster)

    @property
    def num_workers(self):
        """Return the number of workers the scheduler knows now."""
        return len(self.client.scheduler_info().get('workers', {}))

    def close(self):
        """Close the client, and the embedded cluster if there is one."""
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def run(jobs, tset, model, options, engine, progress=None):
    """
    Convert ``jobs`` on ``engine``; return the rows in job order.

    Bags converted by an earlier run are not converted again. ``progress(done,
    total, failed, messages_per_s)`` is called as bags finish. On KeyboardInterrupt
    the tasks are cancelled, temporary outputs removed, and the interrupt re-raised.
    """
    from dask.distributed import as_completed
    rows = [earlier_row(job) for job in jobs]
    todo = [k for k, row in enumerate(rows) if row is None]
    started = time.monotonic()
    messages = failed = 0
    done = len(jobs) - len(todo)
    futures = {}
    try:
        for k in todo:
            future = engine.client.submit(convert_one, jobs[k], tset, model, options,
                                          key=f'convert-{k}-{time.time_ns()}', pure=False)
            futures[future] = k
        if progress:
            progress(done, len(jobs), failed, 0.0)
        for future in as_completed(futures):
            k = futures.pop(future)
            rows[k] = _row_of(future, jobs[k])
            future.release()
            done += 1
            if rows[k]['status'] == STATUS_FAILED:
                failed += 1
            messages += rows[k].get('messages', 0)
            if progress:
                progress(done, len(jobs), failed,
                         messages / max(time.monotonic() - started, 1e-9))
    except KeyboardInterrupt:
        engine.client.cancel(list(futures))
        raise
    finally:
        remove_partial_outputs(jobs)
    return rows


def _row_of(future, job):
    """Return a finished task's row; a task the engine gave up on becomes a failed row."""
    try:
        return future.result()
    except Exception as exc:   # noqa: B902 - KilledWorker, CommClosedError, ...
        return {'robot': job.robot, 'bag': job.bag, 'input': str(job.source),
                'output': str(job.output), 'status': STATUS_FAILED,
                'error': f'the engine gave up on it: {type(exc).__name__}: {exc}'}


# --- the summary ----------------------------------------------------------------------------
def columns(rows):
    """Return the union of the rows' keys, in first-seen order."""
    seen = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def write_summary(rows, path):
    """Write the rows as Parquet (``.parquet``, needs pyarrow) or CSV (``.csv``), atomically."""
    path = pathlib.Path(path)
    cols = columns(rows)
    tmp = path.parent / f'.{path.name}.partial-{os.getpid()}'
    try:
        if path.suffix == '.parquet':
            import pyarrow as pa
            import pyarrow.parquet as pq
            table = pa.table({c: pa.array([row.get(c) for row in rows],
                                          type=_arrow_type(pa, c, rows)) for c in cols})
            pq.write_table(table, tmp)
        else:
            import csv
            with open(tmp, 'w', newline='') as f:
                writer = csv.DictWriter(f, fieldnames=cols)
                writer.writeheader()
                writer.writerows(rows)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _arrow_type(pa, column, rows):
    values = [row.get(column) for row in rows if row.get(column) is not None]
    if all(isinstance(v, str) for v in values):
        return pa.string()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    return pa.float64()


def read_summary(path):
    """Read a summary written by :func:`write_summary` back as a list of dicts."""
    path = pathlib.Path(path)
    if path.suffix == '.parquet':
        import pyarrow.parquet as pq
        return pq.read_table(path).to_pylist()
    import csv
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def plot_summary(rows, path):
    """
    Draw the fleet overview: per joint, each bag's value and the envelope across bags.

    With a model the value is each bag's largest holding torque (which joint works
    hardest); without, the joint's position range.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from .io import atomic_file
    good = [r for r in rows if r.get('status') != STATUS_FAILED]
    cols = columns(good)
    torque = [c for c in cols if c.endswith('/max_holding_torque')]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * max(len(torque), 4)), 4.5))
    if torque:
        joints = [c.rsplit('/', 1)[0] for c in torque]
        for x, c in enumerate(torque):
            values = np.array([r[c] for r in good if r.get(c) is not None], dtype=float)
            if len(values):
                ax.vlines(x, values.min(), values.max(), linewidth=8, alpha=0.3)
                ax.plot(np.full(len(values), x), values, 'k.', markersize=4)
        ax.set_ylabel('largest |holding torque| in a bag (N*m or N)')
        title = 'which joint works hardest across the fleet'
    else:
        joints = [c.rsplit('/', 1)[0] for c in cols if c.endswith('/min_position')]
        for x, j in enumerate(joints):
            lo = [r[f'{j}/min_position'] for r in good if r.get(f'{j}/min_position') is not None]
            hi = [r[f'{j}/max_position'] for r in good if r.get(f'{j}/max_position') is not None]
            if lo and hi:
                ax.vlines(x, min(lo), max(hi), linewidth=8, alpha=0.3)
        ax.set_ylabel('joint position range (rad or m)')
        title = 'joint position envelope across the fleet'
    ax.set_xticks(range(len(joints)), joints, rotation=30, ha='right')
    failed = len(rows) - len(good)
    ax.set_title(f'{title}: {len(good)} bags' + (f' ({failed} failed)' if failed else ''))
    ax.grid(True, axis='y', alpha=0.3)
    fig.tight_layout()
    tmp, commit = atomic_file(path)
    fig.savefig(tmp, dpi=90, format='png')
    plt.close(fig)
    commit()


__all__ = ['Engine', 'Job', 'convert_one', 'find_jobs', 'plot_summary', 'read_summary', 'run',
           'summarize', 'write_summary']
