"""HowNet as a lexicon: word → senses → sememes.

Built from OpenHowNet when its data is installed (``~/.openhownet``), else from the public
files: the senses of polysemous words from SE-WRL-SAT's ``Word_Sense_Sememe_File`` and, for
every other word, its sememe set from ``sememe_prediction``'s ``hownet.txt`` as a single sense.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

from graphmatch.io.datafiles import locate

SENSE_FILE = "hownet/SE-WRL-SAT_Word_Sense_Sememe_File.txt"
WORD_FILE = "hownet/sememe_prediction_hownet.txt"

Sense = tuple[str, ...]


class HowNetLexicon:
    """``senses(word)`` → list of senses, each a tuple of sememe names.

    Args:
        senses: word → its senses.
        lines: word → its sememes as one line of names separated by spaces, a single sense read
            when the word is first asked for (the 127k one-sense words of the public files: the
            lexicon loads in about half the time); a word in both takes ``senses``.
    """

    def __init__(self, senses: Mapping[str, list[Sense]], lines: Mapping[str, str] | None = None):
        self._senses = dict(senses)
        self._lines = dict(lines or {})
        for word in self._senses:
            self._lines.pop(word, None)
        self._size = len(self._senses) + len(self._lines)
        names = {s for ss in self._senses.values() for sense in ss for s in sense}
        self.sememe_names: list[str] = sorted(names.union(" ".join(set(self._lines.values())).split()))

    def senses(self, word: str) -> list[Sense]:
        found = self._senses.get(word)
        if found is None:
            line = self._lines.get(word)
            if line is None:
                return []
            found = self._senses[word] = [tuple(line.split())]
        return found

    def __contains__(self, word: str) -> bool:
        return word in self._senses or word in self._lines

    def __len__(self) -> int:
        return self._size

    @classmethod
    def load(cls, root: str | os.PathLike | None = None) -> HowNetLexicon:
        """OpenHowNet when its data is installed, else the files under the data root."""
        try:
            return cls.from_openhownet()
        except (ImportError, OSError, RuntimeError):
            return cls.from_files(root)

    @classmethod
    def from_files(cls, root: str | os.PathLike | None = None) -> HowNetLexicon:
        with open(locate(WORD_FILE, root), encoding="utf-8") as f:
            lines = f.read().split("\n")
        # two lines per entry (word, then its sememes); the file opens with an empty word
        words = {word: sememes for word, sememes in zip(map(str.strip, lines[0::2]), lines[1::2], strict=False)
                 if word and not sememes.isspace() and sememes}
        senses: dict[str, list[Sense]] = {}
        with open(locate(SENSE_FILE, root), encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                fields = line.split()
                if not fields:
                    continue
                word, rest = fields[0], fields[2:]
                word_senses: list[Sense] = []
                while rest:
                    k = int(rest[0])
                    word_senses.append(tuple(rest[1 : 1 + k]))
                    rest = rest[1 + k :]
                if len(word_senses) != int(fields[1]):
                    raise ValueError(f"{SENSE_FILE}:{lineno}: expected {fields[1]} senses for {word!r}")
                senses[word] = word_senses
        return cls(senses, words)

    @classmethod
    def from_openhownet(cls) -> HowNetLexicon:
        """Read every sense from an installed OpenHowNet dictionary (Chinese sememe names)."""
        import OpenHowNet
        from OpenHowNet.Download import OPENHOWNET_RESOURCE_PATH

        data = os.path.join(OPENHOWNET_RESOURCE_PATH, "resources", "HowNet_dict_complete")
        if not os.path.isfile(data):  # OpenHowNet itself only prints a message and half-builds
            raise OSError(f"OpenHowNet data is not installed ({data} is missing)")
        hownet = OpenHowNet.HowNetDict()
        senses: dict[str, list[Sense]] = {}
        for sense in hownet.get_all_senses():
            names = tuple(sorted({s.zh for s in sense.get_sememe_list()}))
            if names:
                senses.setdefault(sense.zh_word, []).append(names)
        return cls(senses)


@functools.cache
def _shared(root: str | None) -> HowNetLexicon:
    return HowNetLexicon.load(root)


def load_lexicon(root: str | os.PathLike | None = None) -> HowNetLexicon:
    """The HowNet lexicon, loaded once per process and data root (~127k words)."""
    return _shared(None if root is None else str(root))
