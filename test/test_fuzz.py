"""
Property-based fuzzing of everything that parses outside data (seeded hypothesis).

Property for every target: either a correct result, or our own ConfigError/ModelError (or a
refusal with a reason) — never another exception type, and a refused input changes nothing.
The number of generated cases per target is printed at the end of the run.
"""

import collections
import copy
import math

from conftest import CONFIG
from hypothesis import given, HealthCheck, settings, strategies as st
import numpy as np
import pytest
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.kinematics import parameters as kparams
from transmission_bridge.kinematics_node.core import KinematicsCore
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import ConfigError, load_transmissions
from transmission_bridge.transmissions import parameters as tparams
import yaml

CASES = collections.Counter()
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
MODEL = load_model(CONFIG / 'example_arm_model.yaml')
T_DOC = yaml.safe_load((CONFIG / 'example_robot_transmissions.yaml').read_text())
M_DOC = yaml.safe_load((CONFIG / 'example_arm_model.yaml').read_text())
URDF = (CONFIG / 'example_robot.urdf').read_text()

numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10),
                    st.just(1e308), st.just(-0.0))
scalars = st.one_of(numbers, st.text(max_size=6), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


def _paths(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated(draw, doc):
    """Return the valid document with one key replaced, deleted, or a junk key added."""
    data = copy.deepcopy(doc)
    paths = list(_paths(data))
    path = draw(st.sampled_from(paths))
    target = data
    for key in path[:-1]:
        target = target[key]
    action = draw(st.sampled_from(['replace', 'delete', 'add']))
    if action == 'replace':
        target[path[-1]] = draw(values)
    elif action == 'delete':
        del target[path[-1]]
    elif isinstance(target, dict):
        target[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return data


@FUZZ
@given(st.one_of(mutated(T_DOC), values))
def test_transmissions_yaml(doc):
    CASES['transmissions YAML'] += 1
    try:
        ts = load_transmissions(doc)
    except ConfigError as exc:
        assert str(exc)
        return
    # Accepted: it must work as a transmission set.
    a = np.ones(ts.num_actuators)
    np.testing.assert_allclose(ts.joint_to_actuator('position', ts.actuator_to_joint(
        'position', a)), a, rtol=1e-9, atol=1e-6)


@FUZZ
@given(st.one_of(mutated(M_DOC), values))
def test_model_yaml(doc):
    CASES['model YAML'] += 1
    try:
        model = load_model(doc)
    except ModelError as exc:
        assert str(exc)
        return
    q = model.default_positions
    assert np.isfinite(model.gravity_generalized_forces(q)).all()


@FUZZ
@given(st.data())
def test_urdf_text(data):
    CASES['URDF text'] += 1
    text = URDF
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(text) - 1))
        action = data.draw(st.sampled_from(['delete', 'insert', 'number']))
        if action == 'delete':
            text = text[:k] + text[k + data.draw(st.integers(1, 20)):]
        elif action == 'insert':
            text = text[:k] + data.draw(st.sampled_from(['<', '>', '"', 'x', ' ', '&amp;', '\x00',
                                                         '<!DOCTYPE r>', 'nan', '-'])) + text[k:]
        else:
            start = text.find('"', k)
            if start > 0:
                end = text.find('"', start + 1)
                text = text[:start + 1] + data.draw(st.sampled_from(
                    ['fifty', 'nan', 'inf', '0', '-1e300', '', '1 2'])) + text[end:]
    for loader, error in ((load_transmissions, ConfigError), (load_model, ModelError)):
        try:
            loader(text)
        except error as exc:
            assert str(exc)


names = st.lists(st.one_of(st.sampled_from(TS.actuator_names), st.text(max_size=5)),
                 max_size=10)
arrays = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                            st.just(1e308), st.just(-1e308)), max_size=10)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(['a', 'b']), names, arrays, arrays, arrays,
                          st.integers(0, 10)), min_size=1, max_size=8))
def test_bridge_messages(messages):
    core = ActuatorStates(TS)
    for source, n, p, v, e, stamp in messages:
        CASES['actuator JointState'] += 1
        before = core.actuator_positions()
        out = core.ingest(source, n, p, v, e, stamp)
        if out is None and core.last_result.reason and not core.last_result.reason.startswith(
                'no transmission'):
            # Refused: nothing may have changed.
            np.testing.assert_array_equal(core.actuator_positions(), before)
        if out is not None:
            assert len(out.names) == len(set(out.names))
            for field in (out.position, out.velocity, out.effort):
                assert field is None or len(field) == len(out.names)


ENCODERS = load_transmissions({'transmissions': [
    {'name': 'knee', 'type': 'simple',
     'actuators': [{'name': 'knee_motor', 'mechanical_reduction': 6.0,
                    'encoder': {'period': 2 * math.pi}}],
     'joints': [{'name': 'knee', 'limits': {'lower': -1.0, 'upper': 1.0}}]},
    {'name': 'hip', 'type': 'simple', 'actuators': [{'name': 'hip_motor'}],
     'joints': [{'name': 'hip'}]}]})
# Readings a single-turn encoder gives, and worse: wraps, exactly half a turn, NaN, inf.
readings = st.one_of(st.floats(0.0, 2 * math.pi), st.sampled_from(
    [0.0, math.pi, 2 * math.pi, -math.pi, 1e-300, math.nan, math.inf, 1e308]))


@FUZZ
@given(st.lists(st.tuples(readings, st.floats(-5, 5), st.integers(0, 3),
                          st.one_of(st.none(), st.integers(-3, 3)),
                          st.booleans()), min_size=1, max_size=12))
def test_encoder_streams(steps):
    # Hostile encoder streams (issue 45): no exception; a knee published only once its turns
    # are known, always a whole position of the last finite reading (reading + k * period,
    # divided by the reduction); the hip only while its motor is fresh.
    core = ActuatorStates(ENCODERS)
    core.stale_ns = 2
    now = 0
    for reading, hip, dt, turns, hip_too in steps:
        CASES['encoder JointState'] += 1
        now += dt
        if turns is not None:
            core.set_encoder_turns('knee_motor', turns)
        names, values = (['knee_motor', 'hip_motor'], [reading, hip]) if hip_too else (
            ['knee_motor'], [reading])
        out = core.ingest('a', names, values, [], [], now, now_ns=now)
        if out is None:
            continue
        got = dict(zip(out.names, out.position))
        if 'knee' in got:
            assert core.encoders.resolved
            last = core.encoders.last[0]
            if math.isfinite(got['knee']):
                whole = got['knee'] * 6.0
                k = (whole - last) / (2 * math.pi)
                assert abs(k - round(k)) < 1e-6 * max(1.0, abs(k)), (whole, last)
        if 'hip' in got:
            assert now - core.last_seen_ns[1] <= 2


joint_names = st.lists(st.one_of(st.sampled_from(MODEL.joint_names), st.text(max_size=5)),
                       max_size=9)


@FUZZ
@given(st.lists(st.tuples(joint_names, arrays, arrays, st.integers(0, 10)), min_size=1,
                max_size=8))
def test_kinematics_messages(messages):
    core = KinematicsCore(MODEL)
    for n, p, v, stamp in messages:
        CASES['joint_states JointState'] += 1
        before = core.configuration
        out = core.ingest(n, p, v, stamp)
        if out is None:
            assert core.last_reason
            after = core.configuration
            np.testing.assert_array_equal(after[0], before[0])
        else:
            assert out.holding.shape == (MODEL.num_positions,)


@FUZZ
@given(st.lists(st.sampled_from(TS.joint_names + ('knee',)), max_size=8),
       st.lists(arrays, max_size=4), st.data())
def test_trajectories(joints, points, data):
    CASES['JointTrajectory'] += 1
    n = len(points)
    fields = [points] + [data.draw(st.lists(arrays, min_size=n, max_size=n)) for _ in range(3)]
    try:
        names, mapped = CommandMapper(TS).map_trajectory(joints, *fields)
    except ConfigError as exc:
        assert str(exc)
    else:
        for m in mapped:
            assert m is None or (m.shape == (n, len(names)) and np.isfinite(m).all())
    try:
        effort = KinematicsCore(MODEL).feed_forward(joints, fields[0], fields[1])
    except ModelError as exc:
        assert str(exc)
    else:
        assert effort.shape == (n, len(joints)) and np.isfinite(effort).all()


@FUZZ
@given(st.dictionaries(st.one_of(st.sampled_from(list(tparams.parameter_values(TS))),
                                 st.text(max_size=12)), scalars, max_size=4))
def test_bridge_parameters(changes):
    CASES['bridge parameters'] += 1
    try:
        new = tparams.apply_parameters(TS, changes)
    except ConfigError as exc:
        assert str(exc)
    else:
        for name, value in changes.items():
            assert tparams.parameter_values(new)[name] == float(value)
    assert TS == load_transmissions(CONFIG / 'example_robot_transmissions.yaml')


@FUZZ
@given(st.dictionaries(st.one_of(st.sampled_from(list(kparams.parameter_values(MODEL))),
                                 st.text(max_size=12)),
                       st.one_of(scalars, st.lists(numbers, max_size=4)), max_size=4))
def test_kinematics_parameters(changes):
    CASES['kinematics parameters'] += 1
    try:
        new = kparams.apply_parameters(MODEL, changes)
    except ModelError as exc:
        assert str(exc)
    else:
        assert np.isfinite(new.gravity).all()
        assert all(math.isfinite(b) and b >= 0 for b in new.damping)


@pytest.fixture(scope='session', autouse=True)
def _report_cases(request):
    yield
    if CASES:
        request.config._fuzz_cases = dict(CASES)
