"""The errors a user's input raises, below every layer: each is one line naming what is wrong and
where (the command line prints it and exits 2)."""

from __future__ import annotations


class InputError(ValueError):
    """A bad input; :attr:`index` is its position in the lists given."""

    def __init__(self, index: int, reason: str):
        super().__init__(f"input {index}: {reason}")
        self.index, self.reason = index, reason


__all__ = ["InputError"]
