"""rclpy helpers shared by the nodes (message conversion, parameters, process entry)."""
