"""What a newcomer hits first from Python: connection errors that name the URL and
the cause (as the CLI's), `solve_file` answering refused lines as `cubefleet run` does,
`Client.submit` taking a path or lines with a clear error otherwise, and the README's lines
into pandas."""

from __future__ import annotations

import pathlib
import socket
import subprocess
import time

import pytest

import cubefleet
from conftest import REPO, binary


def _started(args, addr_file: pathlib.Path) -> tuple[subprocess.Popen, int]:
    """A `cubefleet coordinator` started with `args` and `--addr-file`; its gRPC port."""
    proc = subprocess.Popen(
        [binary(), "coordinator", "--listen", "127.0.0.1:0", *args,
         "--addr-file", str(addr_file)],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not addr_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the coordinator did not start")
        time.sleep(0.05)
    for line in addr_file.read_text().splitlines():
        name, addr = line.split()
        if name == "grpc":
            return proc, int(addr.rsplit(":", 1)[1])
    proc.kill()
    pytest.fail("no grpc address in the address file")


@pytest.fixture
def servers(tmp_path, cli):
    """A TLS coordinator (a certificate for localhost made by `cubefleet certs`, a client
    token) and a plain one; their ports, the CA and the token."""
    pki = tmp_path / "pki"
    cli("certs", "--name", "localhost", "--out", str(pki))
    tls, tls_port = _started(
        ["--data", str(tmp_path / "tls"), "--tls-cert", str(pki / "cert.pem"),
         "--tls-key", str(pki / "key.pem"), "--client-token", "alice:sesame"],
        tmp_path / "tls.addr",
    )
    plain, plain_port = _started(["--data", str(tmp_path / "plain")], tmp_path / "plain.addr")
    try:
        yield {"tls": tls_port, "plain": plain_port, "ca": pki / "ca.pem", "token": "sesame"}
    finally:
        for p in (tls, plain):
            p.kill()
            p.wait()


def _refusing_port() -> tuple[socket.socket, int]:
    """A loopback port bound and never listened on: it refuses connections while kept."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


def _says(e: pytest.ExceptionInfo, url: str, *words: str) -> None:
    text = str(e.value)
    assert url in text, text
    for w in words:
        assert w in text, text
    for internal in ("code: '", "transport error", "Status {"):
        assert internal not in text, text


def test_connection_errors_name_the_url_and_the_cause(servers):
    sock, port = _refusing_port()
    with sock:
        url = f"http://127.0.0.1:{port}"
        with pytest.raises(ConnectionError) as e:
            cubefleet.Client(url)
        _says(e, url, "nothing is listening")
    url = "http://no-such-host.invalid:7700"
    with pytest.raises(ConnectionError) as e:
        cubefleet.Client(url)
    _says(e, url, "does not resolve")
    with pytest.raises(ValueError) as e:
        cubefleet.Client("127.0.0.1:7700")
    _says(e, "127.0.0.1:7700", "http://127.0.0.1:7700")

    tls, ca, token = f"https://localhost:{servers['tls']}", servers["ca"], servers["token"]
    # the certificate `cubefleet certs` made, trusted through its CA
    assert cubefleet.Client(tls, token=token, tls_ca=ca).status() == []
    with pytest.raises(ConnectionError) as e:
        cubefleet.Client(tls, token=token)
    _says(e, tls, "not trusted")
    by_ip = f"https://127.0.0.1:{servers['tls']}"
    with pytest.raises(ConnectionError) as e:
        cubefleet.Client(by_ip, token=token, tls_ca=ca)
    _says(e, by_ip, "does not name 127.0.0.1")
    plain_to_tls = f"http://localhost:{servers['tls']}"
    with pytest.raises(ConnectionError) as e:
        cubefleet.Client(plain_to_tls, token=token).status()
    _says(e, plain_to_tls, f"https://localhost:{servers['tls']}")
    # the server's TLS alert read as a frame, or the connection it closed: both say https
    assert "speaks TLS" in str(e.value) or "if it serves TLS" in str(e.value)
    tls_to_plain = f"https://127.0.0.1:{servers['plain']}"
    with pytest.raises(ConnectionError) as e:
        cubefleet.Client(tls_to_plain, tls_ca=ca)
    _says(e, tls_to_plain, "plain text")
    with pytest.raises(PermissionError) as e:
        cubefleet.Client(tls, token="guess", tls_ca=ca).status()
    _says(e, tls, "refused the credential", "wrong bearer token")


def test_solve_file_answers_refused_lines_as_run_does():
    table = cubefleet.solve_file(REPO / "examples" / "with-errors.txt")
    statuses = table.column("status").to_pylist()
    assert "invalid" in statuses and "solved" in statuses
    errors = [e for e in table.column("error").to_pylist() if e]
    assert errors and all(isinstance(e, str) for e in errors)
    with pytest.raises(cubefleet.InvalidPosition):
        cubefleet.solve_file(REPO / "examples" / "with-errors.txt", invalid="raise")


def test_submit_takes_a_path_or_lines_and_says_what_else_to_write(servers, tmp_path):
    c = cubefleet.Client(f"http://127.0.0.1:{servers['plain']}")
    with pytest.raises(TypeError, match=r'path="file.txt"'):
        c.submit("file.txt")
    with pytest.raises(TypeError, match="list of positions"):
        c.submit(42)
    f = tmp_path / "two.txt"
    f.write_text("R U\nF2\n")
    assert c.status(c.submit(f))["total"] == 2  # a pathlib.Path is a file
    assert c.status(c.submit(["R U", "F2", "D"]))["total"] == 3


def test_the_readme_lines_into_pandas():
    pytest.importorskip("pandas")
    table = cubefleet.solve_file(REPO / "examples" / "scrambles.txt")
    df = table.to_pandas()
    assert len(df) == table.num_rows > 0
    assert df["length"].max() <= 20
