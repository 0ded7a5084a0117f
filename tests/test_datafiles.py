import pytest

from graphmatch import datafiles


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
    assert not (tmp_path / "x").exists()
    datafiles._download("https://example.invalid/x", tmp_path / "x", datafiles.hashlib.sha256(b"tampered").hexdigest())
    assert (tmp_path / "x").read_bytes() == b"tampered"


def test_registry_matches_shared_data(shared_data):
    for rel, (_, digest) in datafiles.REGISTRY.items():
        path = shared_data / rel
        assert path.is_file(), rel
        assert datafiles.sha256(path) == digest, rel
