"""Plots of a conversion: positions and, with a model, torques over time (matplotlib)."""


def plot_conversion(result, path):
    """
    Write a PNG of the conversion against time.

    Panels: actuator positions (input), joint positions (transmissions applied) and,
    when the conversion had a model, the joint holding torques and the motor torques
    that produce them (``actuator_commands``).
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from ..bag.io import atomic_file
    times = result.times - result.times[0] if len(result.times) else result.times
    panels = [
        (result.actuator_names, result.actuator_positions, 'actuator position (rad)',
         'actuator states (input)'),
        (result.joint_names, result.joint_positions, 'joint position (rad or m)',
         'joint_states (transmissions applied)'),
    ]
    if result.holding_torques is not None:
        panels.append((result.holding_names, result.holding_torques,
                       'joint torque (N*m or N)', 'gravity_torques: joint holding torques'))
    if result.command_efforts is not None:
        panels.append((result.command_names, result.command_efforts, 'motor torque (N*m)',
                       'actuator_commands: motor torques that hold the robot'))
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(10, 3.5 * len(panels)))
    for ax, (names, values, ylabel, title) in zip(axes, panels):
        if values is not None and len(times):
            for k, name in enumerate(names):
                ax.plot(times, values[:, k], label=name)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(fontsize='small', ncol=4, loc='upper right')
    axes[-1].set_xlabel('time since first message (s)')
    fig.tight_layout()
    tmp, commit = atomic_file(path)
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    commit()
