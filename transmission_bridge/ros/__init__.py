"""
What both nodes share: process entry, parameters, diagnostics and launch support.

The rclpy-free pieces their cores and fast paths use, the input checks and the CDR byte
layouts, are :mod:`transmission_bridge.messages`.
"""
