"""A character trie over dictionary words (KG subjects)."""

from __future__ import annotations

from collections.abc import Iterable

_END = ""  # key marking the end of a word; never a character of a word


class Trie:
    """Nested ``dict`` trie with a left-to-right walk that reports every word end."""

    def __init__(self, words: Iterable[str] = ()):
        self.root: dict = {}
        self._size = 0
        for word in words:
            self.insert(word)

    def insert(self, word: str) -> None:
        if not word:
            return
        node = self.root
        for ch in word:
            node = node.setdefault(ch, {})
        if _END not in node:
            node[_END] = True
            self._size += 1

    def __len__(self) -> int:
        return self._size

    def __contains__(self, word: str) -> bool:
        node = self.root
        for ch in word:
            node = node.get(ch)
            if node is None:
                return False
        return _END in node

    def walk(self, text: str, start: int) -> tuple[list[int], int]:
        """Follow the trie along ``text`` from ``start`` as far as it goes.

        Returns the end offsets of every dictionary word that starts at ``start`` (shortest
        first) and the offset the walk reached: where the text ran out, or the first
        character with no child.
        """
        node = self.root
        ends: list[int] = []
        i = start
        while i < len(text):
            node = node.get(text[i])
            if node is None:
                break
            i += 1
            if _END in node:
                ends.append(i)
        return ends, i
