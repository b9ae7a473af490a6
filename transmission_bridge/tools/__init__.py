"""Command-line tools and small helper nodes shipped with the package."""
