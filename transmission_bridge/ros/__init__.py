"""
What both nodes share: process entry, parameters, diagnostics, launch support (rclpy), and
the rclpy-free input checks (named_input) and CDR byte layouts (wire) their cores and fast
paths use.
"""
