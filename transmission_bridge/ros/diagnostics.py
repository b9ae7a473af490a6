"""What a node reports on /diagnostics (its log lines per message: ``named_input``)."""

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue


def diagnostics(stamp, name, hardware_id, counters, warning='', extra=None, error=''):
    """
    Return a DiagnosticArray with one status.

    ERROR with ``error`` when it is set, else WARN with ``warning`` when it is set, else WARN
    when any ``rejected_*`` counter is non-zero, else OK. Every counter (and ``extra``) is
    listed as key/value.
    """
    rejected = sum(v for k, v in counters.items() if k.startswith('rejected'))
    status = DiagnosticStatus(name=name, hardware_id=hardware_id)
    if error:
        status.level = DiagnosticStatus.ERROR
        status.message = error + (f'; {warning}' if warning else '')
    elif warning:
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
