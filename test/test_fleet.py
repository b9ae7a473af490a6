"""
Issue 14: many bags converted on Dask (embedded cluster, or one the test starts), one summary.

Every output is compared byte for byte with converting that bag alone, in this process, with
convert_bag; the summary's figures with what the test wrote into the bags, or read back from
the outputs with rosbags.
"""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

from bag_harness import joint_states, like_a_terminal
from conftest import CONFIG
import numpy as np
import pytest

pytest.importorskip('distributed', reason='the fleet tests need dask[distributed]')
pytest.importorskip('rosbags', reason='the bag tools need rosbags')

from transmission_bridge.bag import io  # noqa: E402
from transmission_bridge.bag.convert import convert_bag  # noqa: E402
from transmission_bridge.bag.example import one_message, write_actuator_bag  # noqa: E402
from transmission_bridge.bag.fleet import read_summary  # noqa: E402
from transmission_bridge.bag.joint_state_cdr import MSGTYPE  # noqa: E402
from transmission_bridge.kinematics import load_model  # noqa: E402
from transmission_bridge.transmissions import load_transmissions  # noqa: E402

TRANSMISSIONS = CONFIG / 'example_robot_transmissions.yaml'
MODEL = CONFIG / 'example_arm_model.yaml'
START_NS = 1_700_000_000_000_000_000
# The irregular bag, written message by message below: what its summary row must say.
IRREGULAR_RATE_HZ = 100.0
IRREGULAR_PAUSE_S = 1.25          # one pause: longer than the default stale_timeout, 0.5 s
IRREGULAR_COUNT = 100


def convert_cli(*args, **kwargs):
    """Run the convert tool as a user does (its console script's module)."""
    return subprocess.run([sys.executable, '-m', 'transmission_bridge.tools.convert',
                           *map(str, args)], capture_output=True, text=True, timeout=600,
                          **kwargs)


def start_convert(*args):
    """Start the convert tool in its own session (so Ctrl-C can go to its process group)."""
    return subprocess.Popen([sys.executable, '-m', 'transmission_bridge.tools.convert',
                             *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=like_a_terminal)


def _write_irregular(path, tset):
    """Write a bag with a pause, an infinite value (rejected) and a NaN (kept), at known places."""
    store = io.typestore()
    n = tset.num_actuators
    with io.atomic_writer(path) as writer:
        conn = writer.add_connection('/actuator_states', MSGTYPE, typestore=store)
        for k in range(IRREGULAR_COUNT):
            t_ns = START_NS + int(round(k / IRREGULAR_RATE_HZ * 1e9))
            if k >= IRREGULAR_COUNT // 2:
                t_ns += int(IRREGULAR_PAUSE_S * 1e9)
            positions = np.full(n, 0.01 * k)
            if k == 10:
                positions[0] = np.inf
            if k == 20:
                positions[1] = np.nan
            writer.write(conn, t_ns, one_message(tset, t_ns, positions))


def _write_broken(path, tset):
    write_actuator_bag(path, tset, seconds=0.5, rate=100.0)
    data = next(path.glob('*.mcap'))
    raw = data.read_bytes()
    data.write_bytes(raw[:len(raw) // 2])


def _fleet(root, tset, robots=4, per_robot=5, seconds=0.5, rate=100.0):
    """Write robots x per_robot bags of different lengths; return their relative paths."""
    rels = []
    for r in range(robots):
        for k in range(per_robot):
            rel = pathlib.PurePosixPath(f'robot{r}', f'day{k}')
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            write_actuator_bag(root / rel, tset, seconds=seconds * (1 + 0.25 * k), rate=rate,
                               start_ns=START_NS + (r * 10 + k) * 1_000_000_000)
            rels.append(rel)
    return rels


def _reference(root, rels, ref, tset, model):
    """Convert each bag alone, in this process: what the fleet run must write."""
    for rel in rels:
        (ref / rel).parent.mkdir(parents=True, exist_ok=True)
        convert_bag(root / rel, ref / rel, tset, model)


def _same_bytes(a, b):
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()), (a, b)
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), f'{a / name} differs'


def _partials(folder):
    return [p for p in folder.rglob('*') if '.partial' in p.name]


def _finished_while_running(out):
    """Return the finished bags' records so far: a running conversion removes staging folders."""
    try:
        return list((out / '.fleet').rglob('*.json'))
    except FileNotFoundError:       # a folder went away while it was being walked
        return []


def test_two_workers_equal_converting_each_bag_alone(tmp_path):
    tset, model = load_transmissions(TRANSMISSIONS), load_model(MODEL)
    root = tmp_path / 'fleet'
    rels = _fleet(root, tset)
    _write_irregular(root / 'robot1' / 'irregular', tset)
    _write_broken(root / 'robot2' / 'broken', tset)
    ref = tmp_path / 'ref'
    _reference(root, rels + [pathlib.PurePosixPath('robot1/irregular')], ref, tset, model)
    out = tmp_path / 'out'
    done = convert_cli(root, '--output-dir', out, '--transmissions', TRANSMISSIONS,
                       '--model', MODEL, '--workers', 2)
    # One bad bag: reported with its reason and the exit code, the others all converted.
    assert done.returncode == 1, done.stderr
    assert 'Traceback' not in done.stderr + done.stdout
    assert 'robot2/broken: cannot read bag' in done.stderr
    assert '1 of 22 bags failed' in done.stderr
    assert '21 bags converted, 1 failed on 2 workers' in done.stdout
    for rel in rels + [pathlib.PurePosixPath('robot1/irregular')]:
        _same_bytes(out / rel, ref / rel)
    assert not (out / 'robot2' / 'broken').exists() and not _partials(out)
    rows = {r['bag']: r for r in read_summary(out / 'summary.parquet')}
    assert len(rows) == 22
    broken = rows['robot2/broken']
    assert broken['status'] == 'failed' and 'cannot read bag' in broken['error']
    # The irregular bag: the figures it was written with.
    irr = rows['robot1/irregular']
    assert irr['robot'] == 'robot1' and irr['status'] == 'converted'
    assert (irr['actuator_states'], irr['rejected'], irr['non_finite']) == (100, 1, 2)
    assert irr['stale_gaps'] == 1
    step = 1 / IRREGULAR_RATE_HZ
    assert irr['longest_gap_s'] == pytest.approx(IRREGULAR_PAUSE_S + step, abs=1e-9)
    assert irr['duration_s'] == pytest.approx((IRREGULAR_COUNT - 1) * step + IRREGULAR_PAUSE_S,
                                              abs=1e-9)
    # Every converted bag: counts from the bag, ranges and torques read back from its output.
    for rel in rels:
        row = rows[str(rel)]
        assert row['status'] == 'converted' and row['robot'] == rel.parts[0]
        assert row['messages'] == row['actuator_states'] == row['joint_states']
        assert (row['rejected'], row['non_finite'], row['stale_gaps']) == (0, 0, 0)
        js = joint_states(out / rel, '/joint_states')
        assert len(js) == row['messages']
        names = next(iter(js.values()))[0][1]
        pos = np.array([m[0][2] for m in js.values()])
        for k, name in enumerate(names):
            assert row[f'{name}/min_position'] == pos[:, k].min()
            assert row[f'{name}/max_position'] == pos[:, k].max()
        grav = joint_states(out / rel, '/kinematics/gravity_torques')
        gnames = next(iter(grav.values()))[0][1]
        tau = np.abs(np.array([m[0][4] for m in grav.values()]))
        for k, name in enumerate(gnames):
            assert row[f'{name}/max_holding_torque'] == tau[:, k].max()
    assert (out / 'summary.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    # A bag already there is not converted again; the broken one is tried (and fails) again.
    again = convert_cli(root, '--output-dir', out, '--transmissions', TRANSMISSIONS,
                        '--model', MODEL, '--workers', 1, '--summary', tmp_path / 's.csv')
    assert again.returncode == 1
    assert '0 bags converted, 21 converted earlier, 1 failed' in again.stdout
    csv_rows = {r['bag']: r for r in read_summary(tmp_path / 's.csv')}
    assert csv_rows['robot1/irregular']['status'] == 'converted earlier'
    assert int(csv_rows['robot1/irregular']['rejected']) == 1


def test_ctrl_c_then_rerun_finishes_the_job(tmp_path):
    tset, model = load_transmissions(TRANSMISSIONS), load_model(MODEL)
    root = tmp_path / 'fleet'
    rels = _fleet(root, tset, robots=2, per_robot=6, seconds=8.0, rate=500.0)
    out = tmp_path / 'out'
    args = (root, '--output-dir', out, '--transmissions', TRANSMISSIONS, '--model', MODEL,
            '--workers', 2)
    proc = start_convert(*args)
    deadline = time.monotonic() + 120
    while not _finished_while_running(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)           # Ctrl-C in the terminal: the whole group
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert 'interrupted' in stderr and 'Traceback' not in stdout + stderr
    assert not _partials(out)
    finished = {str(p.relative_to(out / '.fleet').with_suffix(''))
                for p in (out / '.fleet').rglob('*.json')}
    written = {str(rel) for rel in rels if (out / rel).exists()}
    assert finished == written and 0 < len(finished) < len(rels)
    again = convert_cli(*args)
    assert again.returncode == 0, again.stderr
    assert f'{len(rels) - len(finished)} bags converted, {len(finished)} converted earlier' \
        in again.stdout
    ref = tmp_path / 'ref'
    _reference(root, rels, ref, tset, model)
    for rel in rels:
        _same_bytes(out / rel, ref / rel)


def _dask(*args, log):
    exe = pathlib.Path(sys.executable).parent / 'dask'
    command = [str(exe)] if exe.exists() else [shutil.which('dask') or 'dask']
    return subprocess.Popen(command + list(args), stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
def cluster(tmp_path):
    """Start a Dask scheduler and two single-threaded workers on loopback, as a team would."""
    info = tmp_path / 'scheduler.json'
    log = open(tmp_path / 'dask.log', 'w')
    procs = [_dask('scheduler', '--host', '127.0.0.1', '--port', '0', '--no-dashboard',
                   '--scheduler-file', info, log=log)]
    deadline = time.monotonic() + 60
    while not info.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert info.exists(), (tmp_path / 'dask.log').read_text()
    for _ in range(2):
        procs.append(_dask('worker', '--scheduler-file', info, '--nthreads', '1', '--no-nanny',
                           '--no-dashboard', '--host', '127.0.0.1', log=log))
    address = json.loads(info.read_text())['address']
    from distributed import Client
    with Client(address, timeout='30s') as client:
        client.wait_for_workers(2, timeout=60)
    yield address, procs[1:]
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def test_existing_cluster_with_a_worker_killed_mid_run(tmp_path, cluster):
    address, workers = cluster
    tset, model = load_transmissions(TRANSMISSIONS), load_model(MODEL)
    root = tmp_path / 'fleet'
    rels = _fleet(root, tset, robots=2, per_robot=6, seconds=6.0, rate=500.0)
    out = tmp_path / 'out'
    proc = start_convert(root, '--output-dir', out, '--transmissions', TRANSMISSIONS,
                         '--model', MODEL, '--scheduler', address)
    deadline = time.monotonic() + 120
    while not _finished_while_running(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    workers[0].send_signal(signal.SIGKILL)          # dies mid-run, mid-bag
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert f'{len(rels)} bags converted on 2 workers' in stdout
    assert not _partials(out)                       # the dead worker's half-written bag too
    ref = tmp_path / 'ref'
    _reference(root, rels, ref, tset, model)
    for rel in rels:
        _same_bytes(out / rel, ref / rel)


def test_bad_fleet_arguments_fail_cleanly(tmp_path):
    tset = load_transmissions(TRANSMISSIONS)
    out = tmp_path / 'out'
    base = ('--output-dir', out, '--transmissions', TRANSMISSIONS)
    cases = [
        ((tmp_path / 'missing', *base), 'no bag or folder at'),
        ((tmp_path, *base), 'holds no bag'),
    ]
    for args, words in cases:
        result = convert_cli(*args)
        assert result.returncode == 1 and words in result.stderr, result.stderr
        assert 'Traceback' not in result.stderr and not out.exists()
    bag = tmp_path / 'bags' / 'run1'
    bag.parent.mkdir()
    write_actuator_bag(bag, tset, seconds=0.2)
    twin = tmp_path / 'other' / 'run1'
    twin.parent.mkdir()
    write_actuator_bag(twin, tset, seconds=0.2)
    for args, words in [
            ((bag, twin, *base), 'would both be written to'),
            ((bag, *base, '--scheduler', 'tcp://127.0.0.1:9'), 'cannot reach the Dask scheduler'),
            ((bag, *base, '--summary', tmp_path / 's.txt'), 'must end in .parquet or .csv')]:
        result = convert_cli(*args)
        assert result.returncode == 1 and words in result.stderr, result.stderr
        assert 'Traceback' not in result.stderr
        assert not (out / 'run1').exists()
    usage = convert_cli(bag, out, '--transmissions', TRANSMISSIONS, '--workers', 2)
    assert usage.returncode == 2 and '--workers needs --output-dir' in usage.stderr


def test_progress_line_shows_bags_failures_and_throughput(capsys):
    from transmission_bridge.tools.convert import FleetProgress
    progress = FleetProgress()
    progress._line.enabled = True            # as on a terminal
    progress(3, 10, 1, 12345.6)
    progress(10, 10, 1, 23456.0)             # the last one is always drawn
    progress.done()
    err = capsys.readouterr().err
    assert '3/10' in err and '10/10' in err
    assert '(1 failed)' in err and '23,456 msg/s' in err


def test_a_task_run_again_after_finishing_returns_its_row(tmp_path):
    """Dask reruns a task whose worker died before its result was collected: a no-op."""
    from transmission_bridge.bag import fleet
    tset = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in' / 'run1'
    bag.parent.mkdir()
    write_actuator_bag(bag, tset, seconds=0.3)
    (job,) = fleet.find_jobs([bag], tmp_path / 'out')
    options = {'topic': '/actuator_states', 'joint_states_topic': '/joint_states',
               'gravity_topic': '/g', 'commands_topic': '/c', 'storage': 'mcap',
               'keep_input': False, 'stale_timeout': 0.5}
    first = fleet.convert_one(job, tset, None, options)
    assert first['status'] == 'converted', first
    written = {p.name: p.read_bytes() for p in job.output.iterdir()}
    again = fleet.convert_one(job, tset, None, options)
    assert again == first
    assert {p.name: p.read_bytes() for p in job.output.iterdir()} == written
    assert not _partials(tmp_path / 'out')
    assert [p.name for p in (tmp_path / 'out' / '.fleet').iterdir()] == ['run1.json']
