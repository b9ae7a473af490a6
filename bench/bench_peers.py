"""
The kinematics library against peers, same process, same robots, results checked first.

Per-call time of forward kinematics of all bodies plus gravity torques: ours,
Pinocchio (C++; with every body's 4x4 pose copied out to numpy, and without),
roboticstoolbox-python (``fkine_all`` + ``gravload``) and ikpy (forward kinematics
only, ``full_kinematics=True``). Each peer's numbers are compared with ours before
it is timed, so the robots are really the same. Which figures materialise 4x4
poses as numpy arrays is in the table.
"""

import argparse
import math
import sys

from common import per_call, report
import numpy as np
from robots import arm7_with_screws, puma560


def _rpy(R):
    """URDF roll-pitch-yaw of a rotation matrix (R = Rz(y) Ry(p) Rx(r))."""
    return [math.atan2(R[2, 1], R[2, 2]), math.asin(-max(-1.0, min(1.0, R[2, 0]))),
            math.atan2(R[1, 0], R[0, 0])]


def rtb_puma(model):
    import roboticstoolbox as rtb
    rows = [(0, math.pi / 2, 0), (0.4318, 0, 0), (0.0203, -math.pi / 2, 0.15005),
            (0, math.pi / 2, 0.4318), (0, -math.pi / 2, 0), (0, 0, 0)]
    links = [rtb.RevoluteDH(a=a, alpha=alpha, d=d, m=b.inertial.mass,
                            r=list(b.inertial.com), I=np.zeros(3), Jm=0, G=1, B=0, Tc=[0, 0])
             for (a, alpha, d), b in zip(rows, model.bodies)]
    return rtb.DHRobot(links, gravity=[0, 0, -9.81])


def ikpy_chain(model):
    from ikpy.chain import Chain
    from ikpy.link import OriginLink, URDFLink
    links, child = [OriginLink()], np.eye(4)
    for b in model.bodies:
        X = child @ b.joint.origin
        links.append(URDFLink(name=b.joint.name, origin_translation=X[:3, 3],
                              origin_orientation=_rpy(X[:3, :3]), rotation=b.joint.axis))
        child = b.joint.child_transform
    return Chain(links, active_links_mask=[False] + [True] * len(model.bodies)), child


def main(argv=None):
    """Run the benchmark and print the table."""
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter
                            ).parse_args(argv)
    import pinocchio as pin
    sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent / 'test'))
    from pinocchio_bridge import to_pinocchio
    rows = []
    robots = (('Puma 560 (DH)', puma560()), ('7-DOF arm, 2 screws', arm7_with_screws()))
    for label, model in robots:
        q = np.random.default_rng(0).uniform(-1, 1, model.num_positions)
        poses, tau = model.poses_and_gravity(q)
        t_ours = per_call(lambda: model.poses_and_gravity(q), 2000)
        rows.append({'robot': label, 'library': 'transmission_bridge', 'what': 'FK all + gravity',
                     'poses_as_numpy': 'yes', 'us_per_call': t_ours * 1e6, 'ours_over_peer': 1.0})
        pm, frames = to_pinocchio(model)
        data = pm.createData()
        jids = [frames[n][0] for n in model.body_names]
        pin.forwardKinematics(pm, data, q)
        assert np.allclose(-pin.computeGeneralizedGravity(pm, data, q), tau, atol=1e-9)

        def pin_poses():
            pin.forwardKinematics(pm, data, q)
            pin.computeGeneralizedGravity(pm, data, q)
            return [data.oMi[j].homogeneous for j in jids]

        def pin_bare():
            pin.forwardKinematics(pm, data, q)
            pin.computeGeneralizedGravity(pm, data, q)

        for name, fn, mat in (('pinocchio', pin_poses, 'yes'), ('pinocchio', pin_bare, 'no')):
            t = per_call(fn, 2000)
            rows.append({'robot': label, 'library': name, 'what': 'FK all + gravity',
                         'poses_as_numpy': mat, 'us_per_call': t * 1e6,
                         'ours_over_peer': t_ours / t})
        if label.startswith('Puma'):
            robot = rtb_puma(model)
            frames_rtb = robot.fkine_all(q)
            assert np.allclose(np.array([f.A for f in frames_rtb])[1:], poses, atol=1e-9)
            hold = robot.gravload(q)
            assert np.allclose(hold, -tau, atol=1e-9), (hold, tau)

            def rtb_call():
                robot.fkine_all(q)
                robot.gravload(q)

            t = per_call(rtb_call, 200)
            rows.append({'robot': label, 'library': 'roboticstoolbox-python',
                         'what': 'fkine_all + gravload', 'poses_as_numpy': 'yes (SE3)',
                         'us_per_call': t * 1e6, 'ours_over_peer': t_ours / t})
            chain, last_child = ikpy_chain(model)
            frames_ik = chain.forward_kinematics([0.0, *q], full_kinematics=True)
            assert np.allclose(frames_ik[-1] @ last_child, poses[-1], atol=1e-9)
            t_fk = per_call(lambda: model.body_poses(q), 2000)
            t = per_call(lambda: chain.forward_kinematics([0.0, *q], full_kinematics=True), 500)
            rows.append({'robot': label, 'library': 'transmission_bridge', 'what': 'FK all only',
                         'poses_as_numpy': 'yes', 'us_per_call': t_fk * 1e6,
                         'ours_over_peer': 1.0})
            rows.append({'robot': label, 'library': 'ikpy', 'what': 'FK all only',
                         'poses_as_numpy': 'yes', 'us_per_call': t * 1e6,
                         'ours_over_peer': t_fk / t})
    report('peers', rows, ['robot', 'library', 'what', 'poses_as_numpy', 'us_per_call',
                           'ours_over_peer'])


if __name__ == '__main__':
    main()
