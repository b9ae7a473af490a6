"""
transmission_bridge_identify: fit a robot model's parameters to recorded bags.

    transmission_bridge_identify BAG_OR_FOLDER [...] --model FILE --output FILE
        [--transmissions FILE] [--payload BODY] [--report FILE.png]
        [--workers N | --scheduler ADDRESS]
    transmission_bridge_identify BAG_OR_FOLDER [...] --dynamic --model FILE --output FILE
        [--transmissions FILE [--output-transmissions FILE]] [--report FILE.png]
        [--validation BAG ...] [--accept-worse] [--payload MASS@LINK[:x,y,z]
        --payload-bags BAG ...] [--cutoff HZ] [--rate HZ] [--workers N | --scheduler ADDRESS]
    transmission_bridge_identify excite --model FILE [--transmissions FILE] --duration S
        --output GOAL.yaml [--send ACTION --record BAG]

With --dynamic, from bags of a moving robot: the links' inertial parameters (ten per
body, as the base parameters the data determine), and per motor the rotor inertia,
friction and gear efficiencies through the transmissions (doc/identify_dynamics.md): the
same answer from any model given, every body physical; a model that predicts held-out data
worse than the one given is refused unless --accept-worse. ``excite`` writes the periodic
trajectory that moves a robot for it.

Without --dynamic, the gravity parameters from still poses:

Reads joint_states (joint names, positions, efforts: the torque each joint's actuator
applies, as ros2_control publishes it) or, with --transmissions, actuator_states mapped to
the joints (motor efforts to joint torques). Finds the stretches where the robot stood
still (every joint slower than --speed-threshold for --min-static seconds) and takes one
averaged sample (q, tau) from each. At rest the holding torque is linear in each body's
mass and first moment; the fit changes only the combinations the samples identify, by the
least amount, and keeps the model's values for the rest (doc/calibrate.md). With --payload
BODY only a point payload on that body is fitted. Writes the model in the input's format
(a URDF with only the <inertial> masses and origins changed, or the model YAML), never
over the input, and only when complete. Many bags: samples are gathered per bag on Dask,
as transmission_bridge_convert does.
"""

import argparse
import pathlib
import sys

import numpy as np

from . import cli

PROG = 'transmission_bridge_identify'
DASK = ('distributed', 'pip install "dask[distributed]"')
MIN_SAMPLES = 3


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('bags', nargs='+', metavar='BAG_OR_FOLDER',
                   help='recorded bags, or folders searched for bags')
    p.add_argument('--model', required=True, help='robot model: URDF or model YAML')
    p.add_argument('--output', required=True, help='where the fitted model goes (not --model)')
    p.add_argument('--transmissions', help='read actuator_states and map them to the joints')
    p.add_argument('--topic', help='topic to read (default /joint_states, or /actuator_states '
                                   'with --transmissions)')
    p.add_argument('--payload', metavar='BODY', help='fit only a point payload on BODY; with '
                   '--dynamic, MASS@LINK[:x,y,z]: the known payload --payload-bags carry '
                   "(fixes the links' common scale and every efficiency's absolute value)")
    p.add_argument('--report', metavar='FILE.png', help='plot residuals before and after')
    p.add_argument('--speed-threshold', type=float, default=0.02,
                   help='a joint slower than this is still, rad/s or m/s (default 0.02)')
    p.add_argument('--min-static', type=float, default=0.3,
                   help='shortest still stretch that makes a sample, s (default 0.3)')
    d = p.add_argument_group('moving data (--dynamic)')
    d.add_argument('--dynamic', action='store_true',
                   help='identify inertia, rotors, friction and efficiencies from motion')
    d.add_argument('--output-transmissions', metavar='FILE',
                   help='write the transmissions YAML with the identified actuator values')
    d.add_argument('--cutoff', type=float, default=10.0,
                   help='zero-phase low-pass cut-off of every signal, Hz (default 10)')
    d.add_argument('--accept-worse', action='store_true',
                   help='write the identified model even where it predicts the held-out '
                        'motor torques worse than the model as given (default: exit 1, '
                        'naming the motors, nothing written)')
    d.add_argument('--validation', nargs='+', metavar='BAG_OR_FOLDER',
                   help='judge the fit on these bags, whole (default: every fifth 2 s block '
                        'of the bags fitted, held out)')
    d.add_argument('--payload-bags', nargs='+', metavar='BAG_OR_FOLDER',
                   help='bags recorded carrying the --payload')
    d.add_argument('--keep-idle', action='store_true',
                   help="motors that never move keep the model's values (default: an error "
                        'naming them)')
    d.add_argument('--min-speed', type=float, default=1.0,
                   help='leave out samples where a motor is slower, rad/s (a linear motor: '
                        'a tenth of it in m/s; default 1)')
    d.add_argument('--rate', type=float, default=200.0,
                   help='samples per second kept after filtering (default 200)')
    cli.add_engine_arguments(p.add_argument_group('many bags (Dask)'))
    return p


def main(argv=None):
    """Run the tool; return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ['excite']:
        from .excite import main as excite_main
        return excite_main(argv[1:])
    return cli.run(PROG, _run, parser().parse_args(argv))


def console():
    """Console-script entry point."""
    sys.exit(main())


_Failure = cli.Failure


def _run(args):
    from ..bag.errors import BagError
    from ..kinematics import load_model, ModelError
    from ..transmissions import ConfigError, load_transmissions
    needed = [cli.ROSBAGS] + ([cli.MATPLOTLIB] if args.report else [])
    missing = cli.missing_dependency(*needed)
    if missing:
        raise _Failure(missing)
    model_path, output = pathlib.Path(args.model), pathlib.Path(args.output)
    if output.resolve() == model_path.resolve():
        raise _Failure(f'--output {args.output} is the input model; give another file')
    for target in [output] + ([pathlib.Path(args.report)] if args.report else []):
        if not target.resolve().parent.is_dir():
            raise _Failure(f'no folder {target.parent} for {target.name}')
    if args.workers is not None and args.workers < 1:
        raise _Failure(f'--workers must be at least 1, got {args.workers}')
    if not (args.speed_threshold > 0 and args.min_static >= 0):
        raise _Failure('--speed-threshold must be > 0 and --min-static >= 0')
    try:
        model = load_model(model_path)
        tset = load_transmissions(args.transmissions) if args.transmissions else None
    except (ModelError, ConfigError, OSError) as exc:
        raise _Failure(str(exc)) from None
    if args.payload and not args.dynamic and args.payload not in model.body_names:
        raise _Failure(f'--payload: the model has no body {args.payload!r}')
    bags = _bags(args.bags)
    if args.dynamic:
        args.validation = _bags(args.validation) if args.validation else None
        args.payload_bags = _bags(args.payload_bags) if args.payload_bags else None
        from .identify_dynamic import run
        return run(args, model, tset, bags, _Failure)
    if args.output_transmissions:
        raise _Failure('--output-transmissions goes with --dynamic (static poses identify '
                       'no actuator value)')
    topic = args.topic or ('/actuator_states' if tset else '/joint_states')
    options = (topic, args.speed_threshold, args.min_static)
    try:
        per_bag = _gather(bags, model.joint_names, tset, options, args)
    except BagError as exc:
        raise _Failure(str(exc)) from None
    q = np.concatenate([s['q'] for s in per_bag])
    tau = np.concatenate([s['tau'] for s in per_bag])
    print(f'{len(q)} static samples from {len(bags)} bag(s): ' + ', '.join(
        f'{pathlib.Path(b).name} {len(s["q"])}' for b, s in zip(bags, per_bag)))
    if len(q) < MIN_SAMPLES:
        raise _Failure(f'{len(q)} static samples (at least {MIN_SAMPLES} needed): hold the '
                       f'robot still for --min-static {args.min_static} s in several poses')
    known = np.isfinite(tau)
    before = tau + model.gravity_generalized_forces(q)      # measured - predicted holding
    try:
        fitted, lines = (_fit_payload(model, args.payload, q, tau) if args.payload
                         else _fit_all(model, q, tau, known))
    except ModelError as exc:
        raise _Failure(str(exc)) from None
    after = tau + fitted.gravity_generalized_forces(q)
    for line in lines:
        print(line)
    print('joint                     samples  RMS residual before  after (N*m)')
    for k, name in enumerate(model.joint_names):
        rows = known[:, k]
        print(f'{name:25s} {int(rows.sum()):7d}  {_rms(before[rows, k]):19.4g}  '
              f'{_rms(after[rows, k]):.4g}')
    _write(model_path, output, model, fitted)
    print(f'wrote {output}')
    if args.report:
        _plot(args.report, model.joint_names, before, after)
        print(f'wrote {args.report}')
    return 0


def _rms(x):
    return float(np.sqrt(np.mean(np.square(x)))) if len(x) else float('nan')


def _bags(inputs):
    """Return every bag folder named or found below the inputs (one with metadata.yaml)."""
    found = []
    for item in inputs:
        path = pathlib.Path(item)
        if (path / 'metadata.yaml').is_file():
            found.append(path)
        elif path.is_dir():
            below = sorted(p.parent for p in path.rglob('metadata.yaml'))
            if not below:
                raise _Failure(f'no bag in {item} (a bag is a folder with metadata.yaml)')
            found.extend(below)
        else:
            raise _Failure(f'no bag at {item}')
    return found


def _gather(bags, joints, tset, options, args):
    """Return each bag's static samples, on Dask for many bags (or when asked)."""
    if len(bags) == 1 and not (args.workers or args.scheduler):
        return [samples_of_bag(bags[0], joints, tset, options)]
    missing = cli.missing_dependency(DASK)
    if missing:
        raise _Failure(missing)
    from ..bag.fleet import Engine
    engine = Engine(args.workers, args.scheduler)
    try:
        futures = [engine.client.submit(samples_of_bag, bag, joints, tset, options,
                                        pure=False) for bag in bags]
        return engine.client.gather(futures)
    finally:
        engine.close()


def samples_of_bag(bag, joints, tset, options):
    """
    Return ``{'q', 'tau'}``: the static samples of one bag, joints in ``joints`` order.

    Runs in a Dask worker for many bags; raises BagError naming the bag when it cannot be
    read, has no message on the topic, or no efforts.
    """
    from ..bag.states import read_states
    from ..identification.static import static_samples
    topic, speed_threshold, min_static = options
    names = tset.actuator_names if tset is not None else tuple(joints)
    stamps, values = read_states(bag, topic, names, None if tset is None else tset.units)
    if tset is not None:
        values = tset.joint_state(values)      # what the bridge publishes, set's joint order
        order = [list(tset.joint_names).index(j) if j in tset.joint_names else None
                 for j in joints]
        values = np.stack([values[:, :, k] if k is not None
                           else np.full(values.shape[:2], np.nan) for k in order], axis=-1)
    q, tau, spans = static_samples(stamps, values[:, 0], values[:, 2], values[:, 1],
                                   speed_threshold, min_static)
    keep = np.isfinite(q).all(axis=1)
    return {'q': q[keep], 'tau': tau[keep]}


def _fit_all(model, q, tau, known):
    from ..identification import static as ident
    # Bodies the model gives mass: a massless link (tool0, a sensor frame) stays massless.
    bodies = [b for b in model.body_names if model.body(b).inertial.mass > 0]
    y = ident.regressor(model, q, bodies)
    start = ident.parameters(model, bodies)
    stacked, measured = y[known], tau[known]
    result = ident.fit(stacked, measured, start, names=bodies)
    lines = [f'identified {result.rank} combinations of {result.num_parameters} parameters '
             f'that move a torque ({len(start)} in the model: mass and first moment of '
             f'{len(bodies)} bodies with mass); condition number {result.condition:.3g}; '
             'each combination (columns scaled to unit norm), largest terms:']
    lines += [f'  {k + 1}: {line}' for k, line in enumerate(
        result.combinations(ident.labels(bodies)))]
    for body, wanted in result.kept_masses:
        lines.append(f'body {body!r}: the fit wanted mass {wanted:.4g} kg; kept at the '
                     f"model's {model.body(body).inertial.mass:.4g} kg")
    fitted = ident.with_parameters(model, result.parameters, bodies)
    for name in _changed(model, fitted):
        old, new = model.body(name).inertial, fitted.body(name).inertial
        lines.append(f'  {name}: mass {old.mass:.4g} -> {new.mass:.4g} kg, com '
                     f'{_vec(old.com)} -> {_vec(new.com)} m')
    return fitted, lines


def _changed(model, fitted):
    """Return the bodies whose mass or centre of mass the fit changed."""
    return [name for name in model.body_names
            if model.body(name).inertial.mass != fitted.body(name).inertial.mass
            or not np.array_equal(model.body(name).inertial.com, fitted.body(name).inertial.com)]


def _fit_payload(model, body, q, tau):
    from ..identification import static as ident
    rows = np.isfinite(tau).all(axis=1)
    mass, com, result = ident.payload_fit(model, body, q[rows], tau[rows])
    return model.with_payload(body, mass, com), [
        f'payload on {body!r}: mass {mass:.4g} kg, centre of mass {_vec(com)} m in its frame '
        f'(4 parameters identified; condition number {result.condition:.3g})']


def _vec(v):
    return '(' + ', '.join(f'{x:.4g}' for x in v) + ')'


def _write(model_path, output, model, fitted):
    """Write ``fitted`` in the input's format, atomically."""
    import yaml
    from ..bag.io import atomic_file
    from ..kinematics.urdf import with_inertials
    text = model_path.read_text()
    changes = {name: (fitted.body(name).inertial.mass,
                      [float(x) for x in fitted.body(name).inertial.com])
               for name in _changed(model, fitted)}
    if model_path.suffix.lower() in ('.urdf', '.xml') or text.lstrip().startswith('<'):
        out = with_inertials(text, changes)
    else:
        data = yaml.safe_load(text)
        items = data.get('bodies') or (data.get('dh') or {}).get('rows') or []
        for item in items:
            name = item.get('name') if 'bodies' in data else item.get('link')
            if name in changes:
                inertial = item.setdefault('inertial', {})
                inertial['mass'] = float(changes[name][0])
                inertial['com'] = changes[name][1]
        out = yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
    tmp, commit = atomic_file(output)
    try:
        tmp.write_text(out)
        commit()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _plot(path, joints, before, after):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from ..bag.io import atomic_file
    fig, axes = plt.subplots(len(joints), 1, figsize=(8, 1.6 * len(joints) + 1), sharex=True,
                             squeeze=False)
    for k, (name, ax) in enumerate(zip(joints, axes[:, 0])):
        ax.plot(before[:, k], 'o', ms=3, label='model as given')
        ax.plot(after[:, k], 'o', ms=3, label='identified')
        ax.axhline(0, color='0.6', lw=0.8)
        ax.set_ylabel(f'{name}\nN*m', fontsize=8)
    axes[0, 0].legend(fontsize=8)
    axes[0, 0].set_title('measured minus predicted holding torque, per static sample')
    axes[-1, 0].set_xlabel('static sample')
    fig.tight_layout()
    tmp, commit = atomic_file(path)
    fig.savefig(tmp, dpi=90, format='png')
    plt.close(fig)
    commit()


if __name__ == '__main__':
    console()
