"""`cmake --install` into a temporary prefix: the tool, the capture shim, libvgt.so with its headers, the
CMake package and the pkg-config file, man pages and completions; then a small consumer
(tests/install/consumer.c) built against the prefix twice, with find_package(vgtrace) and with
pkg-config, reads a corpus trace through the public API and must agree with `vgt info --json` and the
db's counts."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

TRACE = REPO / "corpus" / "vk_triangle.vgt"
PUBLIC = ["error.h", "trace.h", "model.h", "version.h", "nv_facts.h", "nv_pushbuf.h", "pushbuf.h", "walk.h", "qmd.h",
          "events.h", "blocklinear.h", "classes.h", "rows.h"]


@pytest.fixture(scope="module")
def prefix(build_dir, tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(p)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return p


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert r.returncode == 0, f"{cmd}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r.stdout


def test_layout(prefix):
    for rel in ["bin/vgt", "lib/libvgt-capture.so", "lib/libvgt.so", "lib/pkgconfig/vgtrace.pc",
                "lib/cmake/vgtrace/vgtraceConfig.cmake", "lib/cmake/vgtrace/vgtraceConfigVersion.cmake",
                "share/man/man1/vgt.1", "share/man/man1/vgt-decode.1", "share/bash-completion/completions/vgt",
                "share/zsh/site-functions/_vgt"]:
        assert (prefix / rel).exists(), rel
    for h in PUBLIC:
        assert (prefix / "include" / "vgt" / h).is_file(), h
    # every header an installed header includes is installed too
    for h in (prefix / "include" / "vgt").rglob("*.h"):
        for inc in re.findall(r'#include "vgt/([a-z_0-9/]+\.h)"', h.read_text()):
            assert (prefix / "include" / "vgt" / inc).is_file(), f"{h.name} includes vgt/{inc}, not installed"


def test_library_soname_and_exports(prefix):
    lib = (prefix / "lib" / "libvgt.so").resolve()
    dyn = _run(["readelf", "-d", str(lib)])
    soname = re.search(r"\(SONAME\)\s+Library soname: \[(.+?)\]", dyn).group(1)
    abi = re.search(r"#define VGT_ABI (\d+)", (prefix / "include/vgt/version.h").read_text()).group(1)
    assert soname == f"libvgt.so.{abi}"
    assert (prefix / "lib" / soname).exists()
    # exported: exactly the functions the installed headers declare (no internals leak)
    exported = {l.split()[-1].split("@")[0] for l in _run(["nm", "-D", "--defined-only", str(lib)]).splitlines()
                if " T " in l}
    declared = set()
    for h in PUBLIC:
        for line in (prefix / "include" / "vgt" / h).read_text().splitlines():
            m = re.match(r"^[a-z].*?[ *](vgt_[a-z0-9_]+)\(", line)
            if m and not line.startswith(("static ", "typedef ")):
                declared.add(m.group(1))
    assert exported == declared, (sorted(exported - declared)[:20], sorted(declared - exported)[:20])
    assert {"vgt_reader_open_path", "vgt_writer_open_path", "vgt_pb_decode_submit", "vgt_rows_walk",
            "vgt_sem_new", "vgt_walk_path", "vgt_library_version"} <= exported


def test_installed_vgt_runs(prefix, tmp_path):
    vgt = prefix / "bin" / "vgt"
    assert _run([str(vgt), "--version"]).startswith("vgt ")
    # record finds the installed shim at ../lib (no GPU here: a trace with SESSION_START/END)
    out = tmp_path / "t.vgt"
    r = subprocess.run([str(vgt), "record", "-o", str(out), "--", "true"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and out.is_file(), r.stderr
    assert "cannot find libvgt-capture.so" not in r.stderr


def _expected(vgt):
    info = json.loads(vgt("info", "--json", TRACE, check=0).stdout)
    census = json.loads(vgt("census", "--json", "--total", TRACE, check=0).stdout)["total"]
    return info, census


def _check(out, vgt, prefix):
    got = json.loads(out)
    assert "vgt " + got["library"] == _run([str(prefix / "bin" / "vgt"), "--version"]).strip()
    info, census = _expected(vgt)
    assert got["records"] == info["records"]
    assert got["submissions"] == info["records_by_type"]["GPFIFO_SUBMIT"]
    assert got["rows"]["submissions"] == got["submissions"]
    assert got["rows"]["methods"] == census["methods"]
    assert got["first_submit_methods"] > 0


def test_consumer_cmake(prefix, tmp_path, vgt):
    b = tmp_path / "b"
    _run(["cmake", "-S", str(REPO / "tests" / "install"), "-B", str(b), f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", str(b)])
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib"))
    _check(_run([str(b / "consumer"), str(TRACE)], env=env), vgt, prefix)


def test_consumer_pkg_config(prefix, tmp_path, vgt):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = _run(["pkg-config", "--cflags", "--libs", "vgtrace"], env=env).split()
    assert _run(["pkg-config", "--modversion", "vgtrace"], env=env).strip()
    exe = tmp_path / "consumer"
    cc = shutil.which("cc") or shutil.which("gcc")
    _run([cc, "-std=c11", "-Wall", "-Werror", "-o", str(exe), str(REPO / "tests" / "install" / "consumer.c"), *flags,
          f"-Wl,-rpath,{prefix / 'lib'}"], env=env)
    _check(_run([str(exe), str(TRACE)]), vgt, prefix)
