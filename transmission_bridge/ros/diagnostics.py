"""diagnostic_msgs/DiagnosticArray built from a node's counters and its current problems."""

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue


def diagnostics(stamp, name, hardware_id, counters, warning='', extra=None):
    """
    Return a DiagnosticArray with one status.

    WARN with ``warning`` when it is set, else WARN when any ``rejected_*`` counter is
    non-zero, else OK. Every counter (and ``extra``) is listed as key/value.
    """
    rejected = sum(v for k, v in counters.items() if k.startswith('rejected'))
    status = DiagnosticStatus(name=name, hardware_id=hardware_id)
    if warning:
        status.level, status.message = DiagnosticStatus.WARN, warning
    elif rejected:
        status.level, status.message = DiagnosticStatus.WARN, f'{rejected} messages rejected'
    else:
        status.level, status.message = DiagnosticStatus.OK, 'ok'
    values = dict(counters, **(extra or {}))
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp
    return msg
