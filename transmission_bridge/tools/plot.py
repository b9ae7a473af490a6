"""Plots of a conversion: actuator and joint positions over time (matplotlib, no display)."""


def plot_conversion(result, path):
    """Write a PNG with actuator positions (top) and joint positions (bottom) against time."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from ..bag.io import atomic_file
    times = result.times - result.times[0] if len(result.times) else result.times
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 7))
    if result.actuator_positions is not None and len(times):
        for k, name in enumerate(result.actuator_names):
            top.plot(times, result.actuator_positions[:, k], label=name)
    top.set_ylabel('actuator position (rad)')
    top.set_title('actuator states (input)')
    if result.joint_positions is not None and len(times):
        for k, name in enumerate(result.joint_names):
            bottom.plot(times, result.joint_positions[:, k], label=name)
    bottom.set_ylabel('joint position (rad or m)')
    bottom.set_xlabel('time since first message (s)')
    bottom.set_title('joint_states (transmissions applied)')
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(fontsize='small', ncol=4, loc='upper right')
    fig.tight_layout()
    tmp, commit = atomic_file(path)
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    commit()
