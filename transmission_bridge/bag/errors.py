"""The exception the bag tools turn into a one-line message and a non-zero exit."""


class BagError(Exception):
    """A bag cannot be read or written as asked; the message says which and why."""
