"""The bridge node: actuator states to joint states, joint commands to the motors."""
