"""
What ``transmission_bridge_identify --dynamic`` reports: the table, the held-out rule, a plot.

What :mod:`.identify_dynamic` found, said: each motor's values ±σ, what the data do not see,
what sits on a bound; the held-out RMS errors of the model as given and identified, and the
refusal of an identified model worse for any motor (:func:`judge`); the report's figure.
"""

import numpy as np

#: An identified model is worse for a motor when its held-out RMS error exceeds the given
#: model's by more than WORSE_MARGIN of it plus NOISE_FLOOR of the motor's RMS torque: two
#: models at the noise differ by that much (a MuJoCo arm identified from its true values:
#: 13 % apart at 0.4 % of the torque).
WORSE_MARGIN = 0.05
NOISE_FLOOR = 0.01
#: A motor is judged on at least this many held-out rows where it moves (the rows an
#: efficiency needs, :data:`..identification.dynamic.MIN_DIRECTION_ROWS`): the RMS of a
#: handful is no measure (a finger nudged past the rest speed 20 times in 30 s, its torques
#: 4e-5 N m).
MIN_JUDGED_ROWS = 50


def print_fit(problem, fit, count, test, kept):
    p, s = fit.parameters, fit.std
    print(f'{count} samples from {len(kept)} bag(s) ({int(fit.rows.sum())} moving motor '
          f'rows); {fit.rank} combinations of {fit.num_unknowns} unknowns identified, '
          f'condition number {fit.condition:.3g}; RMS residual {fit.rms:.4g}')
    print('motor                      rotor_inertia     viscous      coulomb   '
          'eff.driving  eff.driven')
    eta_f, eta_f_std = p.eta_driving, s.alpha * p.eta_driving ** 2
    for k, name in enumerate(problem.names):
        cells = [_pm(p.rotor[k], s.rotor[k]), _pm(p.viscous[k], s.viscous[k]),
                 _pm(p.coulomb[k], s.coulomb[k]), _pm(eta_f[k], eta_f_std[k]),
                 _pm(p.beta[k], s.beta[k])]
        print(f'{name:24s} ' + ' '.join(f'{c:>12s}' for c in cells))
    if fit.scale_known:
        print("  the links' common scale, and with it every efficiency's absolute value, from "
              'the payload bags')
    if fit.scale_held:
        print("  the links' common scale is the model's: from motor torques alone a heavier "
              'arm behind a more efficient gear gives the same torques (pi k, eta_f k, '
              'eta_b / k)')
    for line in fit.combined:
        print('  ' + line)
    if fit.from_model:
        print(f"  the data do not see {len(fit.from_model)} of them: the model's values kept "
              f'for {", ".join(fit.from_model[:12])}'
              + (f' and {len(fit.from_model) - 12} more' if len(fit.from_model) > 12 else ''))
    for label, why in fit.held.items():
        print(f'  {label}: {why}')
    for note in fit.notes:
        print('  ' + note)
    if test is not None:
        _, tau, before, after = test
        print('motor                    held-out RMS torque  residual: model as given  '
              'identified')
        for k, name in enumerate(problem.names):
            print(f'{name:24s} {_rms(tau[:, k]):19.4g}  {_rms(before[:, k]):24.4g}  '
                  f'{_rms(after[:, k]):.4g}')


def judge(problem, fit, test, accept, failure):
    """
    Refuse a model that predicts some motor's held-out torques worse than the one given.

    Worse: its RMS error on the held-out data above the given model's by more than
    :data:`WORSE_MARGIN` of it and :data:`NOISE_FLOOR` of the motor's RMS torque, for a motor
    the fit had rows of (one kept idle, --keep-idle, is not judged: nothing of it was
    identified, and near rest its torques are noise) and with at least
    :data:`MIN_JUDGED_ROWS` held-out rows (fewer are said and not judged).
    Refused with the motors and both errors (nothing is written yet); ``accept``
    (--accept-worse) writes it and says so. Without held-out samples nothing is judged, and
    that is said.
    """
    if test is None:
        print('no held-out samples (the bags are too short for a held-out block): the '
              'identified model is not compared with the model as given')
        return
    _, tau, before, after = test
    worse, few = [], []
    for k, name in enumerate(problem.names):
        rows = np.isfinite(after[:, k])
        if not fit.rows[k].sum() or not rows.any():
            continue
        if rows.sum() < MIN_JUDGED_ROWS:
            few.append(f'{name} ({int(rows.sum())})')
            continue
        a, b = _rms(after[:, k]), _rms(before[:, k])
        if a > (1 + WORSE_MARGIN) * b + NOISE_FLOOR * _rms(tau[rows, k]):
            worse.append((name, a, b))
    if few:
        print(f'not judged on fewer than {MIN_JUDGED_ROWS} held-out rows where the motor '
              f'moves: {", ".join(few)}')
    if not worse:
        return
    text = ', '.join(f'{name} {a:.4g} against {b:.4g}' for name, a, b in worse)
    if not accept:
        raise failure('the identified model predicts the held-out motor torques worse than '
                      f'the model as given (RMS error: {text}); nothing written '
                      '(--accept-worse writes it anyway)')
    print(f'--accept-worse: writing a model that predicts worse than the one given ({text})')


def _pm(value, std):
    return f'{value:.4g}' + (f'±{std:.2g}' if np.isfinite(std) else '')


def _rms(x):
    x = x[np.isfinite(x)]
    return float(np.sqrt(np.mean(np.square(x)))) if len(x) else float('nan')


def plot(path, problem, fit, test):
    """Plot held-out motor torques measured and predicted, before and after; values ± std."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    names = problem.names
    fig, axes = plt.subplots(len(names) + 1, 2, figsize=(11, 1.7 * len(names) + 3),
                             squeeze=False, gridspec_kw={'width_ratios': [3, 1]})
    if test is not None:
        t, tau, before, after = test
        t = t - t[0]
        for k, name in enumerate(names):
            ax, hist = axes[k]
            ax.plot(t, tau[:, k], '.', ms=1.5, color='0.3', label='measured')
            ax.plot(t, tau[:, k] - before[:, k], '.', ms=1.5, label='model as given')
            ax.plot(t, tau[:, k] - after[:, k], '.', ms=1.5, label='identified')
            ax.set_ylabel(f'{name}\nN·m', fontsize=7)
            for residual, label in ((before[:, k], 'as given'), (after[:, k], 'identified')):
                r = residual[np.isfinite(residual)]
                if len(r):
                    hist.hist(r, bins=40, histtype='step', label=label)
            hist.tick_params(labelsize=6)
        axes[0, 0].legend(fontsize=7, markerscale=6)
        axes[0, 0].set_title('held-out motor torques (time of the held-out blocks, s)')
        axes[0, 1].set_title('residuals', fontsize=8)
        axes[0, 1].legend(fontsize=6)
    text = axes[-1, 0]
    text.axis('off')
    axes[-1, 1].axis('off')
    p, s = fit.parameters, fit.std
    lines = [f'{n}: I_r {_pm(p.rotor[k], s.rotor[k])}, b {_pm(p.viscous[k], s.viscous[k])}, '
             f'c {_pm(p.coulomb[k], s.coulomb[k])}, η_f {_pm(p.eta_driving[k], np.nan)}, '
             f'η_b {_pm(p.beta[k], s.beta[k])}' for k, n in enumerate(names)]
    text.text(0, 1, '\n'.join(lines), va='top', family='monospace', fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90, format='png')
    plt.close(fig)
