"""
What both nodes share: process entry, parameters, diagnostics and launch support.

Also the rclpy-free pieces their cores and fast paths use: the input checks
(:mod:`.named_input`) and the CDR byte layouts (:mod:`.wire`).
"""
