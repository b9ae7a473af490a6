"""
``transmission_bridge_identify --dynamic``: the whole dynamic model from bags of a moving robot.

Per bag (on Dask for many, or when asked): the motors' states read, resampled, filtered and
differentiated (:mod:`..identification.data`), then at each pass the square-root normal
equations of its rows (:class:`..identification.problem.Normal`), merged in bag order; the
passes are the library's (:func:`..identification.passes.fit_in_passes`). Writes
the model (only the ``<inertial>`` elements changed) and, with --output-transmissions, the
transmissions YAML with the identified actuator values, after everything is computed,
never over an input.
"""

import pathlib

import numpy as np

from . import cli
from . import identify_report as reporting

DASK = ('distributed', 'pip install "dask[distributed]"')


def run(args, model, tset, bags, failure):
    """Identify; return the exit code (``failure``: the tool's one-line error type)."""
    from ..bag.errors import BagError
    from ..identification.problem import Problem
    from ..kinematics import ModelError
    _outputs(args, failure)
    from ..identification import convex
    missing = cli.missing_dependency(convex.MISSING)
    if missing:
        raise failure(missing)
    if not (args.cutoff > 0 and args.rate > 0 and args.min_speed >= 0):
        raise failure(f'--cutoff and --rate must be > 0 and --min-speed >= 0, got '
                      f'{args.cutoff}, {args.rate} and {args.min_speed}')
    try:
        problem = Problem(model, tset, args.min_speed)
    except ModelError as exc:
        raise failure(str(exc)) from None
    outside = [j for j in model.joint_names if j not in set(
        np.asarray(model.joint_names)[problem.columns])]
    if outside:
        print(f'joints {", ".join(outside)} are not in the transmissions: held at their '
              'default positions, at rest')
    topic = args.topic or ('/actuator_states' if tset is not None else '/joint_states')
    options = (topic, args.cutoff, args.rate)
    payload = _payload(args, problem, failure)
    engine = None
    if len(bags) > 1 or args.workers or args.scheduler:
        missing = cli.missing_dependency(DASK)
        if missing:
            raise failure(missing)
        from ..bag.fleet import Engine
        try:
            engine = Engine(args.workers, args.scheduler)
        except BagError as exc:
            raise failure(str(exc)) from None
    try:
        fit, train, test, kept = _fit(problem, bags, options, engine, failure,
                                      args.keep_idle, payload)
    finally:
        if engine is not None:
            engine.close()
    if args.validation:
        test = _validation(args.validation, problem, options, fit, failure)
    reporting.print_fit(problem, fit, train, test, kept)
    reporting.judge(problem, fit, test, args.accept_worse, failure)
    springs = _springs(tset, bags, topic, args.cutoff, failure)
    texts = _texts(args, problem, fit, failure, springs)
    _commit(texts, args.report, problem, fit, test, failure)
    return 0


def _outputs(args, failure):
    """Check the outputs before anything is read: never an input, folders that exist."""
    inputs = {pathlib.Path(p).resolve() for p in [args.model, args.transmissions] if p}
    named = [('--output', args.output), ('--output-transmissions', args.output_transmissions),
             ('--report', args.report)]
    if args.output_transmissions and not args.transmissions:
        raise failure('--output-transmissions needs --transmissions (the file it rewrites)')
    if args.output_transmissions and not str(args.transmissions).lower().endswith(
            ('.yaml', '.yml')):
        raise failure(f'--output-transmissions rewrites a transmissions YAML; '
                      f'{args.transmissions} is not one')
    for flag, value in named:
        if value and pathlib.Path(value).resolve() in inputs:
            raise failure(f'{flag} {value} is an input; give another file')
        if value and not pathlib.Path(value).resolve().parent.is_dir():
            raise failure(f'{flag}: no folder {pathlib.Path(value).parent}')
    if args.report:
        missing = cli.missing_dependency(cli.MATPLOTLIB)
        if missing:
            raise failure(missing)


def prepare_bag(bag, problem, options):
    """Return ``(train, held_out)`` samples of one bag (a Dask task; BagError names it)."""
    from ..identification.data import prepare
    from ..bag.states import read_states
    topic, cutoff, rate = options
    stamps, values = read_states(bag, topic, problem.names,
                                 None if problem.tset is None else problem.tset.units)
    return prepare(problem, stamps, values[:, 0], values[:, 1], values[:, 2], cutoff, rate)


def normal_of(samples, problem, pi, known=None):
    """Return the :class:`Normal` of ``samples`` classified at ``pi`` (a Dask task)."""
    from ..identification.problem import Normal
    if isinstance(samples, dict):                  # a bag prepared on the worker
        samples = samples['train']
    normal = Normal(problem.num_motors, problem.num_link)
    if samples is not None:
        for start in range(0, len(samples), 20000):
            part = samples.take(slice(start, start + 20000))
            rows = problem.rows(part.q, part.v, part.a, part.motor_v, part.motor_a, part.tau,
                                known)
            normal.add(rows, pi, problem.rest)
    return normal


def _payload(args, problem, failure):
    """Return ``(payload bags, their known parameters)`` of --payload, or None."""
    from ..kinematics import ModelError
    if not (args.payload or args.payload_bags):
        return None
    if not (args.payload and args.payload_bags):
        raise failure('--payload MASS@LINK[:x,y,z] and --payload-bags BAGS go together: the '
                      'bags recorded carrying that payload')
    mass, _, rest = args.payload.partition('@')
    link, _, at = rest.partition(':')
    try:
        mass = float(mass)
        com = [float(x) for x in at.split(',')] if at else [0.0, 0.0, 0.0]
    except ValueError:
        mass, com = float('nan'), []
    if not (np.isfinite(mass) and mass > 0 and link and len(com) == 3
            and np.isfinite(com).all()):
        raise failure(f'--payload {args.payload!r}: expected MASS@LINK[:x,y,z], a mass > 0 '
                      "in kg on a link of the model, its centre in the link's frame in m")
    try:
        known = problem.payload(link, mass, com)
    except ModelError as exc:
        raise failure(f'--payload: {exc}') from None
    return args.payload_bags, known


def _fit(problem, bags, options, engine, failure, keep_idle=False, payload=None):
    """Return ``(fit, training samples, held_out, kept bags)`` of every readable bag."""
    from ..bag.errors import BagError
    from ..identification import passes
    from ..kinematics import ModelError
    tests, sizes = [], []
    if engine is None:
        try:
            train, test = prepare_bag(bags[0], problem, options)
        except BagError as exc:
            raise failure(str(exc)) from None
        kept = list(bags)
        tests.append(test)
        sizes.append(0 if train is None else len(train))

        def normals(pi):
            return [normal_of(train, problem, pi)]
    else:
        # The samples stay on the workers: the passes run where they are; only the
        # held-out parts (for the printout and the report) come back.
        client = engine.client
        # Everything a bag's samples feed is submitted at once, the first pass included:
        # the workers go from reading one bag to the next and to the passes without waiting.
        pi0 = None                      # the first pass: directions from the data alone
        prepared = [client.submit(_prepared_bag, b, problem, options, pi0, pure=False)
                    for b in bags]
        firsts = [client.submit(_pick, f, 'first', pure=False) for f in prepared]
        lengths = [client.submit(_pick, f, 'size', pure=False) for f in prepared]
        kept, train_futures, first_normals = [], [], []
        for bag, future, length, first in zip(bags, prepared, lengths, firsts):
            error = future.exception()
            if isinstance(error, BagError):
                print(f'skipped {bag}: {error}')
                continue
            if error is not None:
                raise error
            kept.append(bag)
            train_futures.append(future)
            tests.append(future)
            sizes.append(length.result())
            first_normals.append(first)

        def normals(pi):
            if pi is pi0 and first_normals:
                return client.gather(first_normals)
            return client.gather([client.submit(normal_of, t, problem, pi, pure=False)
                                  for t in train_futures])
    if not kept:
        raise failure('no bag could be read (each named above)')
    if not any(sizes):
        raise failure('the bags are shorter than the filter: record at least a few seconds')
    # Few: read here, fitted whole (nothing of them held out).
    carried = [] if payload is None else _whole_bags(payload[0], problem, options,
                                                     '--payload-bags', failure)
    try:
        fit = passes.fit_in_passes(
            problem, lambda pi: normals(pi) + [normal_of(c, problem, pi, payload[1])
                                               for c in carried],
            keep_idle, scale_known=bool(carried))
    except passes.IdleMotors as exc:
        raise failure(f'{", ".join(exc.names)} never move faster than --min-speed in the '
                      'data: their rotor inertia, friction and efficiency would stay '
                      'unidentified (record them moving: transmission_bridge_identify '
                      "excite; or keep the model's values with --keep-idle)") from None
    except ModelError as exc:       # Stalled only in a first pass with no step at all
        raise failure(str(exc)) from None
    # The held-out samples' residuals, before and after, where the samples are.
    if engine is None:
        parts = [held_out_of(t, problem, fit.parameters) for t in tests]
    else:
        parts = engine.client.gather([engine.client.submit(
            held_out_of, t, problem, fit.parameters, pure=False) for t in tests])
    del tests
    parts = [x for x in parts if x is not None]
    evaluation = tuple(np.concatenate(x) for x in zip(*parts)) if parts else None
    return fit, int(sum(sizes)), evaluation, kept


def held_out_of(test, problem, fitted):
    """
    Return ``(t, τ, before, after)`` of held-out samples (a Dask task), or None.

    ``before`` and ``after``: measured minus predicted motor torques with the model's values
    and with ``fitted``, NaN where a motor is slower than the rows the fit reads.
    """
    if isinstance(test, dict):                     # a bag prepared on the worker
        test = test['test']
    if test is None:
        return None
    rows = problem.rows(test.q, test.v, test.a, test.motor_v, test.motor_a, test.tau)
    moving = np.abs(test.motor_v) >= problem.rest
    before, after = (np.where(moving, test.tau - rows.predict(p), np.nan)
                     for p in (problem.start, fitted))
    return test.t, test.tau, before, after


def _validation(bags, problem, options, fit, failure):
    """Return :func:`held_out_of` over the ``--validation`` bags, each whole, in time order."""
    parts = [held_out_of(whole, problem, fit.parameters)
             for whole in _whole_bags(bags, problem, options, '--validation', failure)]
    return tuple(np.concatenate(x) for x in zip(*parts))


def _whole_bags(bags, problem, options, flag, failure):
    """Return each bag's samples, nothing held out, in time order (``flag`` names them)."""
    from ..bag.errors import BagError
    from ..identification.data import Samples
    out = []
    for bag in bags:
        try:
            whole = Samples.joined([x for x in prepare_bag(bag, problem, options) if x])
        except BagError as exc:
            raise failure(f'{flag}: {exc}') from None
        if whole is None:
            raise failure(f'{flag}: {bag} is shorter than the filter')
        out.append(whole.take(np.argsort(whole.t, kind='stable')))
    return out


def _prepared_bag(bag, problem, options, pi):
    """
    Return one bag's ``{'train', 'test', 'size', 'first'}`` (a Dask task).

    Its samples and the first pass's factors at ``pi``, in one task: the samples stay on the
    worker that read them, and every later task on them runs there.
    """
    train, test = prepare_bag(bag, problem, options)
    return {'train': train, 'test': test, 'size': 0 if train is None else len(train),
            'first': normal_of(train, problem, pi)}


def _pick(prepared, key):
    """Return one item of :func:`_prepared_bag`'s result (a Dask task)."""
    return prepared[key]


def _springs(tset, bags, topic, cutoff, failure):
    """Return the series-elastic springs identified from ``bags`` ({actuator: fit}), said."""
    if tset is None or not any(tset.actuator(a).spring for a in tset.actuator_names):
        return {}
    from ..bag.errors import BagError
    from ..bag.states import read_states
    from ..identification.springs import fit_springs
    outputs = [tset.actuator(a).output_encoder.name for a in tset.actuator_names
               if tset.actuator(a).output_encoder is not None]
    n, recordings = tset.num_actuators, []
    for bag in bags:
        try:
            stamps, values = read_states(bag, topic, list(tset.actuator_names) + outputs)
        except BagError as exc:
            raise failure(str(exc)) from None
        motors = values[:, :, :n]
        if not tset.units.identity:
            motors = tset.units.states_to_si(motors.copy())
        recordings.append((stamps, motors, values[:, :2, n:]))
    fits = {f.actuator: f for f in fit_springs(tset, recordings, cutoff)}
    for name, f in fits.items():
        spring = tset.actuator(name).spring
        shape = (f'stiffness {f.stiffness:.6g} N*m/rad (the file: {spring.stiffness:g})'
                 if f.stiffness is not None else f'table scale {f.scale:.6g}')
        print(f'spring of {name}: {shape}, damping {f.damping:.4g}, rotor inertia '
              f'{f.rotor_inertia:.4g}; residual RMS {f.rms:.4g} N*m ({f.samples} samples)')
    return fits


def _texts(args, problem, fit, failure, springs=None):
    """Return ``{path: text}`` of every output file (nothing written yet)."""
    from ..kinematics import regressor as reg
    model, changes, notes = reg.with_merged_parameters(problem.model, fit.parameters.pi,
                                                       problem.groups)
    for note in notes:
        print('  ' + note)
    texts = {args.output: _model_text(pathlib.Path(args.model), changes, failure)}
    print(f'{len(changes)} link(s) changed: {", ".join(changes) or "none"}')
    if args.output_transmissions:
        texts[args.output_transmissions] = _transmissions_text(
            pathlib.Path(args.transmissions), problem, fit, springs or {})
    return texts


def _model_text(path, changes, failure):
    import yaml
    from ..kinematics.urdf import with_inertials
    text = path.read_text()
    if path.suffix.lower() in ('.urdf', '.xml') or text.lstrip().startswith('<'):
        return with_inertials(text, changes)
    data = yaml.safe_load(text)
    items = data.get('bodies') or (data.get('dh') or {}).get('rows') or []
    for item in items:
        name = item.get('name') if 'bodies' in data else item.get('link')
        if name in changes:
            mass, com, inertia = changes[name]
            item['inertial'] = {'mass': float(mass), 'com': [float(x) for x in com],
                                'inertia': {k: float(inertia[i, j]) for k, (i, j) in (
                                    ('ixx', (0, 0)), ('iyy', (1, 1)), ('izz', (2, 2)),
                                    ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyz', (1, 2)))}}
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None)


def _transmissions_text(path, problem, fit, springs):
    """
    Return the transmissions YAML with the identified actuator values written in.

    A series-elastic actuator gets its spring's fit (stiffness or the table scaled, damping,
    rotor) and keeps its ideal stage: the spring measures the torque after it.
    """
    import yaml
    data = yaml.safe_load(path.read_text())
    p = fit.parameters
    index = {n: k for k, n in enumerate(problem.names)}
    for transmission in data.get('transmissions', []):
        for actuator in transmission.get('actuators', []):
            k = index.get(actuator.get('name'))
            sprung = springs.get(actuator.get('name'))
            if sprung is not None:
                _spring_values(actuator, sprung)
                continue
            if k is None:
                continue
            actuator['rotor_inertia'] = float(p.rotor[k])
            actuator['friction'] = {'viscous': float(p.viscous[k]),
                                    'coulomb': float(p.coulomb[k])}
            actuator['efficiency'] = {'driving': float(p.eta_driving[k]),
                                      'driven': float(p.beta[k])}
    return '# transmission_bridge_identify --dynamic: actuator values identified\n' + \
        yaml.safe_dump(data, sort_keys=False, default_flow_style=None)


def _spring_values(actuator, fit):
    """Write a spring's fit into its actuator's YAML mapping."""
    spring = dict(actuator['spring'])
    if fit.stiffness is not None:
        spring['stiffness'] = fit.stiffness
    else:
        spring['table'] = [[float(d), float(t * fit.scale)] for d, t in spring['table']]
    spring['damping'] = max(0.0, fit.damping)
    actuator['spring'] = spring
    actuator['rotor_inertia'] = max(0.0, fit.rotor_inertia)


def _commit(texts, report, problem, fit, test, failure):
    """Write every output beside its place, then move them all in (none if one fails)."""
    from ..bag.io import atomic_file
    staged = []
    try:
        for path, text in texts.items():
            tmp, commit = atomic_file(path)
            tmp.write_text(text)
            staged.append((tmp, commit))
        if report:
            tmp, commit = atomic_file(report)
            reporting.plot(tmp, problem, fit, test)
            staged.append((tmp, commit))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for _, commit in staged:
        commit()
    for path in list(texts) + ([report] if report else []):
        print(f'wrote {path}')
