"""The installation a session was created with, and the plugins it loads."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import assert_error, assert_ok


def _copy_prefix(world):
    """A second installation of the same build, inside the world."""
    dest = world.root / "prefix2"
    shutil.copytree(world.prefix, dest, symlinks=True)
    return dest


def test_session_from_another_installation_is_refused(world):
    other = _copy_prefix(world)
    d = world.session_path("s1")
    r = world.ab("session", "create", d, binary=str(other / "bin" / "agent-boundary"))
    assert_ok(r)
    r = world.run_in(d, "sh", "-c", "echo ran > ran.txt")
    assert_error(r, "another agent-boundary installation", "reload", code=1)
    assert not (world.wt / "ran.txt").exists()
    # The advice works.
    assert_ok(world.ab("--session-dir", d, "reload"))
    r = world.run_in(d, "cat", "README.md")
    assert_ok(r)


def test_unknown_backend(world):
    d = world.session_path("s1")
    r = world.ab("--backend", "bogus", "session", "create", d)
    assert_error(r, "plugin not found", "agent-boundary plugins", code=1)
    assert not d.exists()
    r = world.ab("run", "true", env={"AGENT_BOUNDARY_BACKEND": "bogus"})
    assert_error(r, "plugin not found", code=1)


def test_broken_plugin_is_refused_and_listed(world):
    other = _copy_prefix(world)
    plugins = other / "lib" / "agent-boundary" / "plugins"
    (plugins / "backend-evil.so").write_text("not an ELF file\n")
    binary = str(other / "bin" / "agent-boundary")
    r = world.ab("plugins", binary=binary)
    assert_error(r, "backend evil REFUSED", code=1)
    assert "backend nono " in r.stdout and "backend nono REFUSED" not in r.stdout
    # The nono backend still works beside it.
    assert_ok(world.ab("session", "create", world.session_path("s1"), binary=binary))


def test_writable_plugin_is_refused(world):
    other = _copy_prefix(world)
    plugin = other / "lib" / "agent-boundary" / "plugins" / "backend-nono.so"
    os.chmod(plugin, 0o666)
    binary = str(other / "bin" / "agent-boundary")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, binary=binary)
    assert_error(r, "world-writable", "chmod go-w", code=1)
    assert not d.exists()
    r = world.ab("plugins", binary=binary)
    assert_error(r, "backend nono REFUSED", code=1)


def test_writable_plugin_dir_is_refused(world):
    other = _copy_prefix(world)
    plugins = other / "lib" / "agent-boundary" / "plugins"
    os.chmod(plugins, 0o777)
    d = world.session_path("s1")
    r = world.ab("session", "create", d, binary=str(other / "bin" / "agent-boundary"))
    assert_error(r, "world-writable", f"chmod go-w {plugins}", code=1)
    assert not d.exists()


@pytest.mark.protects("installed-code-unwritable")
def test_install_the_sandbox_can_write_is_refused(world):
    """nono grants /tmp to every sandbox (its own group, not a profile grant): an install
    there could be replaced from inside. Reading an install is fine; writing it is not."""
    tmp = Path(tempfile.mkdtemp(prefix="agent-boundary-it-install-", dir="/tmp"))
    try:
        other = tmp / "prefix"
        shutil.copytree(world.prefix, other, symlinks=True)
        d = world.session_path("s1")
        r = world.ab("session", "create", d, binary=str(other / "bin" / "agent-boundary"))
        assert_error(r, "is writable inside this boundary", f"({other}/bin)",
                     "scripts/install.sh", code=1)
        assert not d.exists()
        assert not [p for p in (other / "bin").iterdir() if "write-check" in p.name]
        # The fix works: the same build installed where no sandbox may write.
        assert_ok(world.ab("session", "create", d,
                           binary=str(_copy_prefix(world) / "bin" / "agent-boundary")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

