"""Helpers both libraries share: where a robot file comes from, its XML, value checks."""
