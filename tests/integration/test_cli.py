"""plugins, schema, validate, --version, help: the installation's self-description."""

import json
import re
import struct

from conftest import assert_ok


def test_plugins_lists_nono_backend(world):
    r = world.ab("plugins")
    assert_ok(r)
    plugin_dir = world.prefix / "lib" / "agent-boundary" / "plugins"
    assert r.stdout.splitlines()[0] == f"plugin dir: {plugin_dir}"
    assert re.search(r"^backend nono \S+ \(ABI \d+\.\d+\) " + re.escape(str(plugin_dir)) +
                     r"/backend-nono\.so$", r.stdout, re.M), r.stdout
    assert "REFUSED" not in r.stdout


def test_schema_is_json_schema_of_the_profile(world):
    r = world.ab("schema")
    assert_ok(r)
    schema = json.loads(r.stdout)
    assert schema.get("type") == "object"
    props = schema["properties"]
    for key in ("name", "description", "self_edit", "git_common_dir", "allow", "read", "write",
                "deny", "resolve_symlinks", "env", "nono"):
        assert key in props, key
    assert schema.get("additionalProperties") is False


def test_validate_shipped_default_profile(world, source_dir):
    for f in (source_dir / "profiles" / "default.yaml",
              world.prefix / "share" / "agent-boundary" / "profiles" / "default.yaml"):
        r = world.ab("validate", f)
        assert_ok(r)
        assert r.stdout == f"ok {f}\n"
        assert r.stderr == ""


def test_validate_by_name_and_all(world):
    r = world.ab("validate", "default")
    assert_ok(r)
    assert r.stdout == f"ok {world.profiles}/default.yaml\n"
    r = world.ab("validate")
    assert_ok(r)
    assert r.stdout == f"ok {world.profiles}/default.yaml\n"


def test_installed_default_matches_repo(world, source_dir):
    installed = world.prefix / "share" / "agent-boundary" / "profiles" / "default.yaml"
    assert installed.read_text() == (source_dir / "profiles" / "default.yaml").read_text()


def test_version(world):
    r = world.ab("--version")
    assert_ok(r)
    assert re.search(r"\d+\.\d+\.\d+", r.stdout), r.stdout


def test_help_lists_commands(world):
    r = world.ab("--help")
    assert_ok(r)
    assert re.search(r"^Usage: agent-boundary \[OPTIONS\]", r.stdout, re.M), r.stdout
    for cmd in ("status", "on", "off", "use", "reload", "list", "run", "session", "validate",
                "schema", "plugins"):
        assert re.search(rf"^\s+{cmd}\b", r.stdout, re.M), cmd


def _has_interpreter(elf: bytes) -> bool:
    """Whether an ELF file has a PT_INTERP program header (is dynamically linked)."""
    assert elf[:4] == b"\x7fELF", "not an ELF file"
    is64 = elf[4] == 2
    order = "<" if elf[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(order + "Q", elf, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", elf, 0x36)
    else:
        phoff, = struct.unpack_from(order + "I", elf, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", elf, 0x2A)
    for i in range(phnum):
        p_type, = struct.unpack_from(order + "I", elf, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP
            return True
    return False


def test_probe_is_installed_static(world):
    # The probe runs inside sandboxes with no library grants of its own.
    probe = world.prefix / "libexec" / "agent-boundary" / "probe"
    assert not _has_interpreter(probe.read_bytes()), "the probe is dynamically linked"
    # Sanity of the check itself: the main binary is dynamic.
    assert _has_interpreter((world.prefix / "bin" / "agent-boundary").read_bytes())
