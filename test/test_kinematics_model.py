"""Model validation, editing round trips, show_details, relative transforms."""

from kinematics_models import random_model
import numpy as np
import pytest
from transmission_bridge.kinematics import (
    Body, FixedJoint, Inertial, load_model, Model, ModelError, PrismaticJoint, RevoluteJoint)

QUATERNION_ATOL = 1e-15     # unit quaternions, the same formula summed in another order


def chain():
    return Model([
        Body('base', FixedJoint('mount')),
        Body('upper', RevoluteJoint('shoulder', axis=(0, 1, 0)), Inertial(2.0, (0.2, 0, 0)),
             'base'),
        Body('lower', RevoluteJoint('elbow', axis=(0, 1, 0),
                                    origin=np.array([[1, 0, 0, 0.4], [0, 1, 0, 0],
                                                     [0, 0, 1, 0], [0, 0, 0, 1.0]])),
             Inertial(1.0, (0.15, 0, 0)), 'upper'),
        Body('tool', FixedJoint('flange'), Inertial(0.5), 'lower'),
        Body('slider', PrismaticJoint('rail', axis=(1, 0, 0)), Inertial(1.0), 'base'),
    ], 'demo')


def test_names_and_order():
    m = chain()
    assert m.body_names == ('base', 'upper', 'lower', 'tool', 'slider')
    assert m.joint_names == ('shoulder', 'elbow', 'rail')
    assert m.num_positions == 3
    assert m.children('base') == ('upper', 'slider')


@pytest.mark.parametrize('bodies,match', [
    ([Body('a', FixedJoint('j'), parent='ghost')], "body 'a': unknown parent 'ghost'"),
    ([Body('a', FixedJoint('j1')), Body('a', FixedJoint('j2'))], "duplicate body name 'a'"),
    ([Body('a', FixedJoint('j')), Body('b', FixedJoint('j'))], "duplicate joint name 'j'"),
    ([Body('a', FixedJoint('j1'), parent='b'), Body('b', FixedJoint('j2'), parent='a')],
     'cycle in the body tree: a -> b -> a'),
    ([Body('a', FixedJoint('j1'), parent='b'), Body('b', FixedJoint('j2'))],
     "body 'a' is listed before its parent 'b'"),
])
def test_tree_validation(bodies, match):
    with pytest.raises(ModelError, match=match):
        Model(bodies)


def test_body_and_inertial_validation():
    with pytest.raises(ModelError, match="body 'x': mass must be >= 0, got -1.0"):
        Inertial(-1.0, owner="body 'x'")
    with pytest.raises(ModelError, match='inertia is not physical'):
        Inertial(1.0, ixx=1.0, iyy=1.0, izz=3.0)
    with pytest.raises(ModelError, match='inertia is not physical'):
        Inertial(1.0, ixx=-0.1, iyy=1.0, izz=1.0)
    with pytest.raises(ModelError, match="'world' is reserved"):
        Body('world', FixedJoint('j'))
    with pytest.raises(ModelError, match='cannot be its own parent'):
        Body('a', FixedJoint('j'), parent='a')


def test_remove_and_attach_subtree_round_trip():
    m = chain()
    rest, sub = m.remove_body('upper')
    assert rest.body_names == ('base', 'slider')
    assert sub.body_names == ('upper', 'lower', 'tool')
    assert sub.body('upper').parent == 'world'
    back = rest.add_subtree('base', sub)
    assert set(back.body_names) == set(m.body_names)
    q = {'shoulder': 0.3, 'elbow': -0.8, 'rail': 0.1}
    fk_back = back.forward_kinematics([q[j] for j in back.joint_names])
    fk = m.forward_kinematics([q[j] for j in m.joint_names])
    for name in m.body_names:
        np.testing.assert_allclose(fk_back[name], fk[name], atol=1e-15)


def test_add_body_replace_joint_with_joint():
    m = chain().add_body(Body('camera', FixedJoint('cam_mount'), parent='tool'))
    assert m.body_names[-1] == 'camera'
    m2 = m.replace_joint('lower', PrismaticJoint('elbow', axis=(1, 0, 0)))
    assert m2.joint('elbow').type_name == 'prismatic'
    m3 = m.with_joint('elbow', damping=0.7)
    assert m3.damping.tolist() == [0.0, 0.7, 0.0]
    assert m.damping.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(m3.damping_forces([1.0, 2.0, 3.0]), [0.0, -1.4, 0.0])
    with pytest.raises(ModelError, match='default_position 5.0 is outside'):
        m.with_default_positions([0.0, 5.0, 0.0])
    with pytest.raises(ModelError, match='unknown parent'):
        m.add_body(Body('x', FixedJoint('xj'), parent='nowhere'))


def test_show_details_table():
    text = chain().show_details()
    lines = text.splitlines()
    assert lines[0] == 'Robot: (5 bodies)'
    assert lines[2].split() == ['Idx', 'Body', 'Name', 'Joint', 'Name', 'Joint', 'Type',
                                'Parent', 'Name(Idx)', 'Children', 'Name(s)']
    assert lines[4].split() == ['1', 'base', 'mount', 'fixed', 'world(0)', 'upper(2)',
                                'slider(5)']
    assert lines[6].split() == ['3', 'lower', 'elbow', 'revolute', 'upper(2)', 'tool(4)']


def test_relative_transform():
    m = random_model(4)
    q = np.random.default_rng(4).uniform(-1, 1, m.num_positions)
    fk = m.forward_kinematics(q)
    a, b = m.body_names[1], m.body_names[-1]
    X_AB = m.relative_transform(q, a, b)
    np.testing.assert_allclose(fk[a] @ X_AB, fk[b], atol=1e-14)
    np.testing.assert_allclose(m.relative_transform(q, 'world', b), fk[b], atol=1e-15)
    with pytest.raises(ModelError, match="unknown frame 'nope'"):
        m.relative_transform(q, 'nope', b)
    with pytest.raises(ModelError, match='expected q with last dimension'):
        m.forward_kinematics(q[:-1])


def test_quaternions_invert_the_rotation_matrix_one_at_a_time_and_stacked():
    from transmission_bridge.kinematics.spatial import rotation_to_quaternion
    rng = np.random.default_rng(21)
    # Random rotations, plus the awkward ones: identity and half-turns about each axis.
    q = rng.normal(size=(60, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    rows = ([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)])
    R = np.stack([np.stack(r, -1) for r in rows], -2)
    R = np.concatenate([R, np.eye(3)[None], np.diag([1.0, -1, -1])[None],
                        np.diag([-1.0, 1, -1])[None], np.diag([-1.0, -1, 1])[None]])
    many = rotation_to_quaternion(R)
    one = np.array([rotation_to_quaternion(r) for r in R])
    np.testing.assert_array_equal(one, many)
    np.testing.assert_array_equal(rotation_to_quaternion(R.reshape(8, 8, 3, 3)),
                                  many.reshape(8, 8, 4))
    expected = np.where(q[:, 3:] < 0, -q, q)
    np.testing.assert_allclose(many[:60], expected, rtol=0, atol=1e-14)
    # Identity, then half-turns about x, y, z: the vector part alone, w = 0.
    np.testing.assert_array_equal(many[60:], np.eye(4)[[3, 0, 1, 2]])
    assert (many[:, 3] >= 0).all()


def test_one_configuration_buffers_give_the_models_results_and_the_same_quaternions():
    from transmission_bridge.kinematics.spatial import rotation_to_quaternion
    rng = np.random.default_rng(22)
    m = random_model(22, 9)
    ws = m.one_configuration()
    rows = np.empty((len(m.body_names), 7))
    for q in rng.normal(size=(20, m.num_positions)) * 2:
        ws.frames(q)
        tau, energy = ws.gravity_energy()
        poses, tau_m, energy_m = m.poses_gravity_and_energy(q)
        np.testing.assert_array_equal(ws.poses(), poses)
        np.testing.assert_array_equal(tau, tau_m)
        assert energy == energy_m
        ws.pose_rows(rows)
        np.testing.assert_array_equal(rows[:, :3], poses[:, :3, 3])
        # The pose table folds the constant into one product: equal to an ulp or two.
        np.testing.assert_allclose(rows[:, 3:], rotation_to_quaternion(poses[:, :3, :3]),
                                   rtol=0, atol=QUATERNION_ATOL)


def test_a_model_shared_by_threads_and_pickled_keeps_its_results():
    import pickle
    import threading
    rng = np.random.default_rng(23)
    m = random_model(23, 8)
    qs = rng.normal(size=(2, 300, m.num_positions))
    alone = [np.array([m.gravity_generalized_forces(q) for q in part]) for part in qs]
    got = [None, None]

    def work(k):
        got[k] = np.array([m.gravity_generalized_forces(q) for q in qs[k]])
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):      # each thread its own buffers: the same bits as one at a time
        np.testing.assert_array_equal(got[k], alone[k])
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy.gravity_generalized_forces(qs[0, 0]), alone[0][0])


URDF_TWO_LINKS = """<robot name="r"><link name="base"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0"
    iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_the_root_link_of_a_urdf_is_the_world_frame_by_its_tf_name():
    m = load_model(URDF_TWO_LINKS)
    q = np.array([0.3])
    assert m.root_frame == 'base' and m.frame_index('base') is None
    assert m.frame_index('world') is None and m.frame_index('arm') == 0
    np.testing.assert_array_equal(m.relative_transform(q, 'base', 'arm'),
                                  m.forward_kinematics(q)['arm'])
