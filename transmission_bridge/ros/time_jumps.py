"""Reset a node's caches when its clock jumps backwards (a looping bag under sim time)."""

from rclpy.clock import JumpThreshold
from rclpy.duration import Duration


def on_backward_jump(node, reset):
    """
    Call ``reset()`` whenever ``node``'s clock jumps back or switches source.

    Returns the handler, which must be kept alive for as long as the callback is wanted.
    """
    def after(jump):
        if jump.clock_change or jump.delta.nanoseconds < 0:
            reset()
            node.get_logger().info('time jumped backwards: cached states cleared')

    threshold = JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1),
                              on_clock_change=True)
    return node.get_clock().create_jump_callback(threshold, post_callback=after)
