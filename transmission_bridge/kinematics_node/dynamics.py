"""
The kinematics node's inverse dynamics: which transmissions' motors it includes, and what of them.

``transmissions_file`` names them; without it a URDF model's own ``<transmission>`` elements
are used when one of their actuators gives a ``rotor_inertia`` or a friction (a file that
says nothing of its motors changes nothing, and one the bridge could not map is no reason
to stop the kinematics). doc/dynamics.md has the formulas.

Each term is counted once (:func:`~transmission_bridge.transmissions.effort_law.joint_side`,
the commanded law's split): the motors' friction, a stage's efficiency and the rotor of a
stage below efficiency 1 act at the motor, before the gear's loss, so they are the bridge's
(its one commanded law adds them to every effort it sends); the kinematics node keeps the
rotors of ideal stages, which pass unchanged to the joints (``Tᵀ I T a``).
"""

import numpy as np

from .settings import TRANSMISSIONS_FILE
from ..kinematics import ModelError
from ..transmissions import ConfigError, load_transmissions
from ..transmissions.effort_law import joint_side, joint_side_terms
from ..transmissions.urdf import transmissions_from_urdf


def assumed(mode, path, tset):
    """
    Return ``(source, terms)`` the node states it assumes (``terms`` None: nothing to state).

    Only the ``inverse_dynamics`` feed-forward carries the rotors of ideal stages; gravity
    carries no motor term, so it agrees with any bridge.
    """
    if mode != 'inverse_dynamics':
        return '', None
    source = path or ("the robot description's <transmission>s" if tset else '')
    return source, joint_side_terms(tset)


def motor_transmissions(model, source, path, warn):
    """
    Return the transmission set whose motors the inverse dynamics include, or False.

    ``source`` is what the model was loaded from (a path, or URDF text); ``path`` the
    ``transmissions_file`` parameter ('' for none). Raises ModelError naming the parameter
    if the file does not load or drives a joint the model lacks; ``warn(text)`` says why a
    URDF's own transmissions are left out.
    """
    if path:
        try:
            tset = load_transmissions(path)
            _check(model, tset)
        except (ConfigError, ModelError) as exc:
            raise ModelError(f'{TRANSMISSIONS_FILE} {path!r}: {exc}') from None
        return joint_side(tset)
    text = _urdf_text(source)
    if text is None:
        return False
    try:
        tset = transmissions_from_urdf(text)
    except ConfigError:
        return False                        # none, or none this package maps
    if not any(a.rotor_inertia or a.viscous_friction or a.coulomb_friction
               for s in tset.specs for a in s.actuators):
        return False
    try:
        _check(model, tset)
    except ModelError as exc:
        warn(f"the robot description's transmissions are left out of the inverse dynamics: "
             f'{exc}')
        return False
    return joint_side(tset)


def warm_up_dynamics(model):
    """Compile the dynamics' kernels now (numba), not on the first trajectory."""
    q = model.default_positions
    model.inverse_dynamics(q, np.zeros_like(q), np.zeros_like(q))
    model.inverse_dynamics(q[None], np.zeros((1, len(q))), np.zeros((1, len(q))))
    model.mass_matrix(q)                # forward dynamics: a simulator's first step
    model.mass_matrix(q[None])


def _check(model, tset):
    """Raise ModelError naming a transmission joint ``model`` lacks."""
    model.mass_matrix(model.default_positions, tset)


def _urdf_text(source):
    """Return the URDF text of ``source`` (a path or text), or None if it is not a URDF."""
    if isinstance(source, str) and source.lstrip().startswith('<'):
        return source
    if str(source).endswith(('.urdf', '.xml')):
        with open(source, encoding='utf-8') as stream:
            return stream.read()
    return None
