from pathlib import Path

import pytest

from graphmatch.io import atomic, datafiles, text_files


def test_explicit_root_then_env(tmp_path, monkeypatch):
    (tmp_path / "kbert" / "kgs").mkdir(parents=True)
    (tmp_path / "kbert" / "kgs" / "HowNet.spo").write_text("a\tb\tc\n")
    monkeypatch.delenv(datafiles.ENV_VAR, raising=False)
    assert datafiles.locate("kbert/kgs/HowNet.spo", tmp_path) == tmp_path / "kbert/kgs/HowNet.spo"
    monkeypatch.setenv(datafiles.ENV_VAR, str(tmp_path))
    assert datafiles.locate("kbert/kgs/HowNet.spo") == tmp_path / "kbert/kgs/HowNet.spo"


def test_missing_file_offline_names_file_url_and_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(datafiles.ENV_VAR, raising=False)
    monkeypatch.setattr(datafiles, "CACHE_DIR", tmp_path / "cache")
    with pytest.raises(datafiles.DataFileMissing) as err:
        datafiles.locate("kbert/kgs/Medical.spo", tmp_path, download=False)
    msg = str(err.value)
    assert "kbert/kgs/Medical.spo" in msg and "GRAPHMATCH_DATA" in msg
    assert "https://raw.githubusercontent.com/autoliuweijie/K-BERT" in msg


def test_failed_download_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datafiles, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.delenv(datafiles.ENV_VAR, raising=False)

    def offline(url, timeout):
        raise OSError("network unreachable")

    monkeypatch.setattr(datafiles.urllib.request, "urlopen", offline)
    with pytest.raises(datafiles.DataFileMissing, match="downloading https://.*failed"):
        datafiles.locate("kbert/kgs/Medical.spo", tmp_path)
    with pytest.raises(datafiles.DataFileMissing, match="LCQMC"):
        datafiles.locate("lcqmc/train.tsv", tmp_path)


def test_download_checks_sha256(tmp_path, monkeypatch):
    import io

    monkeypatch.setattr(datafiles.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"tampered"))
    with pytest.raises(OSError, match="sha256 mismatch"):
        datafiles._download("https://example.invalid/x", tmp_path / "x", "0" * 64)
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary copy
    datafiles._download("https://example.invalid/x", tmp_path / "x", datafiles.hashlib.sha256(b"tampered").hexdigest())
    assert (tmp_path / "x").read_bytes() == b"tampered"


@pytest.mark.parametrize("how", ["text", "bytes", "function"])
def test_write_atomically_replaces_the_file_in_one_rename(tmp_path, monkeypatch, how):
    target = tmp_path / "sub" / "out.txt"
    content = {"text": "новый\n", "bytes": "новый\n".encode(),
               "function": lambda tmp: Path(tmp).write_text("новый\n", encoding="utf-8")}[how]
    atomic.write_atomically(target, "old\n")  # makes the missing folder
    renames, synced = [], []
    replace, fsync = atomic.os.replace, atomic.os.fsync

    def watch_replace(src, dst):
        assert Path(dst) == target and target.read_text() == "old\n"  # the old file until the rename
        assert Path(src).parent == target.parent and Path(src).read_bytes() == "новый\n".encode()
        assert synced, "the data reaches the disk before the rename"
        renames.append(src)
        replace(src, dst)

    monkeypatch.setattr(datafiles.os, "replace", watch_replace)
    monkeypatch.setattr(datafiles.os, "fsync", lambda fd: synced.append(fd) or fsync(fd))
    atomic.write_atomically(target, content)
    assert len(renames) == 1 and target.read_text(encoding="utf-8") == "новый\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("exists", [False, True])
def test_a_failed_write_leaves_neither_the_target_nor_a_temporary_file(tmp_path, exists):
    target = tmp_path / "out.bin"
    if exists:
        target.write_bytes(b"before")

    def half_then_fail(tmp: str) -> None:
        Path(tmp).write_bytes(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic.write_atomically(target, half_then_fail)
    assert [p.name for p in tmp_path.iterdir()] == (["out.bin"] if exists else [])
    assert not exists or target.read_bytes() == b"before"
    with pytest.raises(TypeError):  # a failure before anything is written is cleaned up alike
        atomic.write_atomically(target, 3)  # type: ignore[arg-type]
    assert [p.name for p in tmp_path.iterdir()] == (["out.bin"] if exists else [])


def test_registry_matches_shared_data(shared_data):
    for rel, (_, digest) in datafiles.REGISTRY.items():
        path = shared_data / rel
        assert path.is_file(), rel
        assert datafiles.sha256(path) == digest, rel


def test_an_explicit_root_without_the_file_falls_back_to_the_env(tmp_path, monkeypatch):
    env, given = tmp_path / "env", tmp_path / "given"
    (env / "kbert" / "kgs").mkdir(parents=True)
    (env / "kbert" / "kgs" / "HowNet.spo").write_text("a\tb\tc\n")
    given.mkdir()
    monkeypatch.setenv(datafiles.ENV_VAR, str(env))
    monkeypatch.setattr(datafiles, "CACHE_DIR", tmp_path / "cache")
    assert datafiles.locate("kbert/kgs/HowNet.spo", given, download=False) == env / "kbert/kgs/HowNet.spo"
    with pytest.raises(datafiles.DataFileMissing) as err:
        datafiles.locate("kbert/kgs/Medical.spo", given, download=False)
    looked = str(err.value)
    assert str(given / "kbert/kgs/Medical.spo") in looked and str(env / "kbert/kgs/Medical.spo") in looked


def test_a_root_that_is_not_a_folder_is_an_error_not_a_fall_back(tmp_path, monkeypatch, capsys):
    """A mistyped ``data.root`` is one line naming it, even where ``$GRAPHMATCH_DATA`` has the file."""
    from graphmatch.cli.main import main

    (tmp_path / "kbert" / "kgs").mkdir(parents=True)
    (tmp_path / "kbert" / "kgs" / "HowNet.spo").write_text("a\tb\tc\n")
    monkeypatch.setenv(datafiles.ENV_VAR, str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for call in (lambda: datafiles.locate("kbert/kgs/HowNet.spo", tmp_path / "typo"),
                 lambda: datafiles.resolve_path("kbert/kgs/x.spo", tmp_path / "typo")):
        with pytest.raises(FileNotFoundError, match=r"data root .*typo \(data.root, --data-dir\) is not a folder"):
            call()
    assert main(["train", "relation/semeval_att_blstm_quick", "--set", f"data.root={tmp_path / 'typo'}",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("typo (data.root, --data-dir) is not a folder") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_relative_data_paths(tmp_path, monkeypatch):
    """Absolute: as is; relative: the working folder if it is there, else the data roots."""
    root, env, work = tmp_path / "root", tmp_path / "env", tmp_path / "work"
    for folder in (root / "bq", env / "bq", env / "only", work / "bq"):
        folder.mkdir(parents=True)
    for f in (root / "bq" / "train.csv", env / "bq" / "train.csv", env / "only" / "x.csv"):
        f.write_text("x\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv(datafiles.ENV_VAR, str(env))
    assert datafiles.resolve_path("bq/train.csv", root) == root / "bq" / "train.csv"
    assert datafiles.resolve_path("only/x.csv", root) == env / "only" / "x.csv"
    (work / "bq" / "train.csv").write_text("x\n")
    assert datafiles.resolve_path("bq/train.csv", root) == Path("bq/train.csv")  # the working folder first
    assert datafiles.resolve_path(env / "only" / "x.csv") == env / "only" / "x.csv"
    with pytest.raises(FileNotFoundError, match="data.train nope.csv not found: looked at .*work/nope.csv"):
        datafiles.resolve_path("nope.csv", root, "data.train")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        datafiles.resolve_path(tmp_path / "absent.csv")


def test_user_text_files(tmp_path, monkeypatch):
    f = tmp_path / "in.txt"
    f.write_bytes(b"\xef\xbb\xbfa\tb\r\nc\n")
    assert text_files.read_text(f) == "a\tb\r\nc\n"
    assert list(text_files.iter_lines(f)) == ["a\tb", "c"]
    f.write_bytes("第一行\n".encode() + b"ab\xffc\n")
    with pytest.raises(ValueError, match=r"in.txt:2: not valid UTF-8 \(byte 0xff at byte 3 of the line\)"):
        text_files.read_text(f)
    with pytest.raises(ValueError, match=r"in.txt:2: not valid UTF-8"):
        list(text_files.iter_lines(f))
    with pytest.raises(ValueError, match="is a folder; a file was expected"):
        text_files.read_text(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        list(text_files.iter_lines(tmp_path / "missing.txt"))
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbfx\ny\n"), encoding="utf-8"))
    assert list(text_files.iter_lines("-")) == ["x", "y"]


def test_a_bom_at_the_start_of_any_line_is_dropped(tmp_path, monkeypatch):
    """Files joined together (``cat a.tsv b.tsv``) keep each file's BOM at the start of a line."""
    f = tmp_path / "joined.tsv"
    f.write_bytes(b"\xef\xbb\xbflabel\ttext\r\n1\tx\n\xef\xbb\xbf0\ty\n\xef\xbb\xbf\r\n1\tz\xef\xbb\xbf\n")
    assert list(text_files.iter_lines(f)) == ["label\ttext", "1\tx", "0\ty", "", "1\tz\ufeff"]  # mid-line: text
    assert text_files.read_text(f) == "label\ttext\r\n1\tx\n0\ty\n\r\n1\tz\ufeff\n"
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x\n\xef\xbb\xbfy\n"), encoding="utf-8"))
    assert list(text_files.iter_lines("-")) == ["x", "y"]


def test_a_nul_byte_is_refused_naming_the_line(tmp_path, monkeypatch):
    f = tmp_path / "in.tsv"
    f.write_bytes(b"a\tb\nc\x00d\n")
    for read in (text_files.read_text, lambda p: list(text_files.iter_lines(p))):
        with pytest.raises(ValueError, match=r"in\.tsv:2: a NUL byte \(at byte 2 of the line\) in a text file"):
            read(f)
    f.write_bytes(b"\x00\x00\xff\xfe")  # binary: the NUL comes first
    with pytest.raises(ValueError, match=r"in\.tsv:1: a NUL byte \(at byte 1 of the line\)"):
        text_files.read_text(f)
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("ok\nnot\0ok\n"))  # a text stream (stdin replaced)
    with pytest.raises(ValueError, match=r"<stdin>:2: a NUL byte"):
        list(text_files.iter_lines("-"))
