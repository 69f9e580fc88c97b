"""Short-lived credentials injected from outside the boundary: AWS, GitHub, kubeconfig.

Real tools only: Debian's AWS CLI v2 (`/usr/bin/aws`) with a static-keys profile and a
`credential_process` profile whose script (in the world) prints an Expiration we control,
counts its calls and fails on demand; Debian's gh with a token in the world's
~/.config/gh/hosts.yml. The launcher exports them before it execs nono; `run env` shows
what the agent sees; the hook and `status` show state, never a value."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import (AWS_SECRET, assert_error, assert_no_crash, assert_ok, file_mode,
                      need_tool, write_script)

STATIC_KEY = "AKIASTATICFAKE01"
STATIC_SECRET = "STATIC-SECRET-0001"
GH_TOKEN = "gho_FAKEGITHUBTOKEN0001"
CP_SECRET_RE = re.compile(r"CP-(SECRET|TOKEN)-\d{4}")
EM_DASH = "\u2014"

AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")

EKS_PROD = "arn:aws:eks:eu-west-1:111111111111:cluster/prod"
EKS_DEV = "arn:aws:eks:us-east-2:222222222222:cluster/dev"
KUBECONFIG_TEXT = f"""apiVersion: v1
kind: Config
clusters:
- name: {EKS_PROD}
  cluster:
    server: https://prod.eks.example.invalid
    certificate-authority-data: UFJPRC1DQQ==
- name: {EKS_DEV}
  cluster:
    server: https://dev.eks.example.invalid
    certificate-authority-data: REVWLUNB
- name: orbstack
  cluster:
    server: https://127.0.0.1:26443
    certificate-authority-data: T1JCLUNB
contexts:
- name: {EKS_PROD}
  context: {{cluster: "{EKS_PROD}", user: prod}}
- name: orbstack
  context: {{cluster: orbstack, user: orbstack}}
users:
- name: prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: [--profile, eks-prod, eks, get-token, --cluster-name, prod]
- name: orbstack
  user:
    client-certificate-data: T1JCLUNFUlQ=
    client-key-data: T1JCLUtFWS1TRUNSRVQ=
current-context: orbstack
"""


# -- the world's credentials -------------------------------------------------------------------

class Creds:
    """AWS profiles, a credential_process under test control, and a gh login, in a world."""

    def __init__(self, world):
        self.world = world
        self.cp_dir = world.root / "cp"
        self.cp_dir.mkdir()
        self.ttl = self.cp_dir / "ttl"
        self.fail = self.cp_dir / "fail"
        self.count_file = self.cp_dir / "count"
        self.ttl.write_text("3600\n")
        (world.root / "bin").mkdir()
        self.cp_script = write_script(world.root / "bin" / "cred-process", f"""#!/bin/sh
d={shlex.quote(str(self.cp_dir))}
n=$(cat "$d/count" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$d/count"
if [ -e "$d/fail" ]; then echo "cred-process: token expired (call $n)" >&2; exit 1; fi
exp=$(date -u -d "@$(( $(date +%s) + $(cat "$d/ttl") ))" +%Y-%m-%dT%H:%M:%SZ)
printf '{{"Version": 1, "AccessKeyId": "ASIACP%04d", "SecretAccessKey": "CP-SECRET-%04d", \
"SessionToken": "CP-TOKEN-%04d", "Expiration": "%s"}}\\n' $n $n $n "$exp"
""")
        with open(world.aws_credentials, "a") as f:
            f.write(f"\n[static]\naws_access_key_id = {STATIC_KEY}\n"
                    f"aws_secret_access_key = {STATIC_SECRET}\n")
        with open(world.aws_config, "a") as f:
            f.write("\n[profile static]\nregion = eu-west-3\n"
                    f"\n[profile cp]\ncredential_process = {self.cp_script}\nregion = us-east-2\n"
                    "\n[profile eks-prod]\nsso_account_id = 111111111111\n"
                    "sso_role_name = ReadOnly\nregion = eu-west-1\n")
        gh_dir = world.home / ".config" / "gh"
        gh_dir.mkdir(parents=True)
        (gh_dir / "hosts.yml").write_text(
            f"github.com:\n    oauth_token: {GH_TOKEN}\n    user: tester\n"
            "    git_protocol: https\n")
        os.chmod(gh_dir / "hosts.yml", 0o600)

    @property
    def calls(self) -> int:
        return int(self.count_file.read_text()) if self.count_file.exists() else 0

    def profile(self, name="default", aws="static", github=True, kube=None):
        lines = []
        if aws:
            lines.append(f"aws: {{profile: {aws}}}")
        if github:
            lines.append("github: {push: true}")
        if kube:
            lines.append(f"kube: {kube}")
        return self.world.profile(name, extra="".join(line + "\n" for line in lines))


@pytest.fixture
def creds(world):
    need_tool("aws")
    need_tool("gh")
    return Creds(world)


def env_of(result) -> dict:
    assert_ok(result)
    out = {}
    for line in result.stdout.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k] = v
    return out


def aws_file(d: Path) -> Path:
    return d / "aws-credentials.env"


def meta(path: Path) -> dict:
    m = {}
    for line in path.read_text().splitlines():
        if line.startswith("# ") and "=" in line:
            k, _, v = line[2:].partition("=")
            m[k] = v
    return m


def assert_no_secret(text: str, *extra: str) -> None:
    for secret in (STATIC_SECRET, GH_TOKEN, AWS_SECRET, *extra):
        assert secret not in text, f"secret {secret!r} leaked into:\n{text}"
    assert not CP_SECRET_RE.search(text), f"credential_process secret leaked into:\n{text}"


# -- injection -----------------------------------------------------------------------------------

def test_tools_are_pinned_only_when_asked(world, creds):
    plain = json.loads((world.create_session("plain") / "boundary.json").read_text())
    assert "tools" not in plain and "aws_profile" not in plain
    creds.profile()
    pinned = json.loads((world.create_session("creds") / "boundary.json").read_text())
    assert pinned["aws_profile"] == "static"
    assert pinned["github"] == {"push": True}
    # Debian's AWS CLI v2, by absolute path (a v1 shim earlier on PATH would lack
    # export-credentials).
    assert pinned["tools"] == {"aws": "/usr/bin/aws", "gh": "/usr/bin/gh"}


def test_run_env_shows_exactly_what_is_injected(world, creds):
    creds.profile()
    d = world.create_session()
    # The user's own profile selection never reaches inside.
    env = env_of(world.run_in(d, "env", env={"AWS_PROFILE": "static",
                                             "AWS_DEFAULT_PROFILE": "static"}))
    assert env["AWS_ACCESS_KEY_ID"] == STATIC_KEY
    assert env["AWS_SECRET_ACCESS_KEY"] == STATIC_SECRET
    assert "AWS_SESSION_TOKEN" not in env  # static keys have none
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "eu-west-3"
    assert env["AWS_CONFIG_FILE"] == env["AWS_SHARED_CREDENTIALS_FILE"] == "/dev/null"
    assert "AWS_PROFILE" not in env and "AWS_DEFAULT_PROFILE" not in env
    assert env["GH_TOKEN"] == env["GITHUB_TOKEN"] == GH_TOKEN
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert env["GIT_CONFIG_KEY_0"] == env["GIT_CONFIG_KEY_1"] == "credential.helper"
    assert env["GIT_CONFIG_VALUE_0"] == ""
    assert env["GIT_CONFIG_VALUE_1"] == "!/usr/bin/gh auth git-credential"
    # The exec launcher (what a harness rewrite runs) injects the same.
    exec_env = env_of(world.ab("exec", "--session-dir", d, "--", "/usr/bin/env"))
    for k in (*AWS_VARS[:2], *AWS_VARS[3:], "GH_TOKEN", "GITHUB_TOKEN", "GIT_CONFIG_VALUE_1"):
        assert exec_env[k] == env[k], k


def test_tools_inside_use_the_injected_credentials_and_home_stays_denied(world, creds):
    creds.profile()
    d = world.create_session()
    r = world.run_in(d, "/usr/bin/aws", "configure", "export-credentials")
    assert_ok(r)
    assert json.loads(r.stdout)["AccessKeyId"] == STATIC_KEY
    r = world.run_in(d, "cat", world.aws_credentials)
    assert r.returncode != 0
    assert_no_crash(r)
    assert STATIC_SECRET not in r.stdout and AWS_SECRET not in r.stdout
    r = world.run_in(d, "cat", world.home / ".config" / "gh" / "hosts.yml")
    assert r.returncode != 0 and GH_TOKEN not in r.stdout
    r = world.run_in(d, "git", "config", "--get-all", "credential.helper")
    assert_ok(r)
    assert r.stdout.splitlines() == ["", "!/usr/bin/gh auth git-credential"]


def test_a_credential_process_is_exported_once_then_cached(world, creds):
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    first = env_of(world.run_in(d, "env"))
    assert first["AWS_ACCESS_KEY_ID"].startswith("ASIACP")
    assert first["AWS_SESSION_TOKEN"].startswith("CP-TOKEN-")
    assert first["AWS_REGION"] == "us-east-2"
    calls = creds.calls
    assert calls >= 1
    m = meta(aws_file(d))
    assert m["profile"] == "cp"
    assert float(m["expires_at"]) == pytest.approx(time.time() + 3600, abs=120)
    for _ in range(3):
        again = env_of(world.run_in(d, "env"))
        assert again["AWS_ACCESS_KEY_ID"] == first["AWS_ACCESS_KEY_ID"]
    assert creds.calls == calls
    status = world.ab("--session-dir", d, "status")
    assert_ok(status)
    assert "credentials: AWS profile cp valid until" in status.stdout
    assert_no_secret(status.stdout + status.stderr)


def test_credentials_inside_the_refresh_margin_are_exported_again(world, creds):
    creds.ttl.write_text("200\n")  # expires in 200 s: inside the 5-minute margin
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    keys = set()
    for _ in range(3):
        before = creds.calls
        keys.add(env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"])
        assert creds.calls > before
    assert len(keys) == 3


def test_refreshed_once_the_margin_is_reached(world, creds):
    creds.ttl.write_text("306\n")  # fresh for about 6 s
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    first = env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"]
    calls = creds.calls
    assert env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"] == first
    assert creds.calls == calls
    refresh_at = float(meta(aws_file(d))["expires_at"]) - 300
    time.sleep(max(0.0, refresh_at - time.time()) + 0.5)
    second = env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"]
    assert creds.calls > calls
    assert second != first


def test_a_failure_is_reported_with_the_hint_and_cached(world, creds):
    creds.fail.write_text("")
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    r = world.run_in(d, "env")
    env = env_of(r)
    assert "AWS_ACCESS_KEY_ID" not in env
    note = [line for line in r.stderr.splitlines() if "no AWS creds" in line]
    assert len(note) == 1, r.stderr
    assert note[0].startswith("agent-boundary: no AWS creds: ")
    assert "cred-process: token expired" in note[0]
    assert note[0].endswith(f" {EM_DASH} try `aws sso login`")
    calls = creds.calls
    assert calls >= 1
    m = meta(aws_file(d))
    assert "failed_at" in m and "cred-process: token expired" in m["error"]
    assert file_mode(aws_file(d)) == 0o600
    # Cached for 5 minutes: not retried, even once the source works again.
    creds.fail.unlink()
    r = world.run_in(d, "env")
    assert "no AWS creds" in r.stderr
    assert "AWS_ACCESS_KEY_ID" not in env_of(r)
    assert creds.calls == calls
    j = json.loads(world.ab("--session-dir", d, "status", "--json").stdout)
    assert j["credentials"]["aws"]["state"] == "failed"
    assert "token expired" in j["credentials"]["aws"]["error"]


def test_a_failed_refresh_keeps_still_valid_credentials(world, creds):
    creds.ttl.write_text("200\n")
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    key = env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"]
    creds.fail.write_text("")
    r = world.run_in(d, "env")
    assert env_of(r)["AWS_ACCESS_KEY_ID"] == key  # valid for ~200 s more: kept
    assert "AWS credentials refresh failed: " in r.stderr
    assert "try `aws sso login`" in r.stderr
    calls = creds.calls
    r = world.run_in(d, "env")
    assert env_of(r)["AWS_ACCESS_KEY_ID"] == key
    assert creds.calls == calls  # the failed refresh is cached too
    assert_no_secret(r.stderr)


def test_gh_failure_is_reported_with_its_hint(world, creds):
    (world.home / ".config" / "gh" / "hosts.yml").unlink()
    creds.profile(aws=None)
    d = world.create_session()
    r = world.run_in(d, "env")
    env = env_of(r)
    assert "GH_TOKEN" not in env and "GIT_CONFIG_COUNT" not in env
    assert "agent-boundary: no GitHub token: " in r.stderr
    assert f" {EM_DASH} try `gh auth login`" in r.stderr


def test_removing_credentials_from_the_profile_stops_injection(world, creds):
    creds.profile()
    d = world.create_session()
    env = env_of(world.run_in(d, "env"))
    assert "AWS_ACCESS_KEY_ID" in env and "GH_TOKEN" in env
    assert aws_file(d).exists() and (d / "github-credentials.env").exists()
    creds.profile(aws=None, github=False)
    assert_ok(world.ab("--session-dir", d, "reload"))
    env = env_of(world.run_in(d, "env"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GH_TOKEN", "GITHUB_TOKEN",
              "GIT_CONFIG_COUNT", "AWS_CONFIG_FILE"):
        assert k not in env, k
    # No secret outlives its request.
    assert not aws_file(d).exists()
    assert not (d / "github-credentials.env").exists()
    b = json.loads((d / "boundary.json").read_text())
    assert "aws_profile" not in b and "tools" not in b


def test_switching_the_aws_profile_exports_the_new_one(world, creds):
    creds.profile(aws="static", github=False)
    d = world.create_session()
    assert env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"] == STATIC_KEY
    creds.profile(aws="cp", github=False)
    assert_ok(world.ab("--session-dir", d, "reload"))
    assert STATIC_SECRET not in (aws_file(d).read_text() if aws_file(d).exists() else "")
    assert env_of(world.run_in(d, "env"))["AWS_ACCESS_KEY_ID"].startswith("ASIACP")


def test_secret_files_are_private_at_every_moment(world, creds):
    creds.ttl.write_text("200\n")  # every launch exports again
    creds.profile(aws="cp")
    d = world.create_session()
    stop = threading.Event()
    seen: set[str] = set()
    bad: list = []

    def watch():
        while not stop.is_set():
            try:
                names = os.listdir(d)
            except FileNotFoundError:
                continue
            for name in names:
                if "credentials.env" not in name and not name.startswith("kubeconfig"):
                    continue
                try:
                    st = os.lstat(d / name)
                except FileNotFoundError:
                    continue
                seen.add(name)
                if stat.S_IMODE(st.st_mode) & 0o077:
                    bad.append((name, oct(stat.S_IMODE(st.st_mode))))

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        for _ in range(6):
            assert_ok(world.run_in(d, "true", umask=0))  # even with a permissive umask
        creds.fail.write_text("")
        (d / "aws-credentials.env").unlink()  # a failure record is written too
        assert_ok(world.run_in(d, "true", umask=0))
    finally:
        stop.set()
        t.join()
    assert bad == [], bad
    assert "aws-credentials.env" in seen and "github-credentials.env" in seen
    temps = [n for n in seen if n.endswith(".tmp")]
    assert temps, f"the watcher never saw a temp file (saw {sorted(seen)})"
    for name in os.listdir(d):
        assert not name.endswith(".tmp"), name
        # Files 0600, directories (the session's `tracked/` registry) 0700: nothing for others.
        want = 0o700 if (d / name).is_dir() and not (d / name).is_symlink() else 0o600
        assert file_mode(d / name) == want, name


def test_concurrent_launches_export_once(world, creds):
    creds.profile(aws="cp", github=False)
    d = world.create_session()
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: world.run_in(d, "printenv", "AWS_ACCESS_KEY_ID"),
                                range(4)))
    keys = {r.stdout.strip() for r in results}
    for r in results:
        assert_ok(r)
    assert len(keys) == 1 and next(iter(keys)).startswith("ASIACP")
    # One export: botocore runs a credential_process once per export-credentials.
    assert creds.calls == 1


def test_exporters_get_fixed_argv_without_secrets(world, creds):
    log = world.root / "argv.log"
    wrap = world.root / "wrap"
    wrap.mkdir()
    aws = write_script(wrap / "aws", f'#!/bin/sh\nprintf "aws %s\\n" "$*" >> {log}\n'
                                     'exec /usr/bin/aws "$@"\n')
    gh = write_script(wrap / "gh", f'#!/bin/sh\nprintf "gh %s\\n" "$*" >> {log}\n'
                                   'exec /usr/bin/gh "$@"\n')
    creds.profile(aws="cp")
    over = {"AGENT_BOUNDARY_AWS": aws, "AGENT_BOUNDARY_GH": gh}
    d = world.create_session(env=over)
    assert json.loads((d / "boundary.json").read_text())["tools"] == {"aws": aws, "gh": gh}
    env = env_of(world.run_in(d, "env"))
    assert env["GIT_CONFIG_VALUE_1"] == f"!{gh} auth git-credential"
    lines = log.read_text().splitlines()
    assert sorted(set(lines)) == sorted({
        "aws --version",
        "aws configure export-credentials --profile cp",
        "aws configure get region --profile cp",
        "gh auth token --hostname github.com"}), lines
    assert_no_secret(log.read_text())


def _processes() -> dict[int, int]:
    """pid -> ppid of every process now."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat_text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        out[int(entry)] = int(stat_text.rsplit(")", 1)[1].split()[1])
    return out


def _descendants(root: int, tree: dict[int, int]) -> set[int]:
    found = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in tree.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _holders(secrets, root: int) -> list[str]:
    """Every process with a secret in its argv, and every process outside the tree of `root`
    (the command's own) with one in its environment. One snapshot gives both the processes and
    the tree: a process the command starts after the snapshot (its loop's `sleep`) is neither
    scanned nor taken for a stranger."""
    tree = _processes()
    command_tree = _descendants(root, tree)
    hits = []
    for pid in tree:
        for what in ("cmdline",) if pid in command_tree else ("cmdline", "environ"):
            try:
                raw = Path(f"/proc/{pid}/{what}").read_bytes()
            except OSError:
                continue
            text = raw.replace(b"\0", b" ").decode("utf-8", "replace")
            for secret in secrets:
                if secret in text:
                    hits.append(f"pid {pid} {what}: {text[:300]}")
    return hits


@pytest.mark.protects("credentials-argv")
@pytest.mark.parametrize("backend", ["nono", "srt"])
def test_no_process_holds_a_secret_in_argv_while_the_command_runs(world, creds, backend):
    """Scans every process while a command with injected credentials runs: a secret in any
    argv (readable by every user on the machine) or in a foreign environment is a leak."""
    if backend == "srt":
        for tool in ("srt", "node", "bwrap", "socat", "rg"):
            need_tool(tool)
    tag = uuid.uuid4().hex[:12].upper()
    secret, token = f"UNIQ-SECRET-{tag}", f"gho_UNIQ{tag}"
    with open(world.aws_credentials, "a") as f:
        f.write(f"\n[uniq]\naws_access_key_id = AKIAUNIQ{tag[:8]}\n"
                f"aws_secret_access_key = {secret}\n")
    with open(world.aws_config, "a") as f:
        f.write("\n[profile uniq]\nregion = eu-west-3\n")
    (world.home / ".config" / "gh" / "hosts.yml").write_text(
        f"github.com:\n    oauth_token: {token}\n    user: tester\n    git_protocol: https\n")
    creds.profile(aws="uniq")
    d = world.session_path("argv")
    assert_ok(world.ab("--backend", backend, "session", "create", d, "--workdir", world.wt))
    ready, release = world.wt / "ready", world.wt / "release"
    script = ('env > ready.tmp && mv ready.tmp ready; n=0; '
              'while [ ! -e release ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done')
    p = subprocess.Popen([world.ab_bin, "--session-dir", str(d), "run", "--", "/bin/sh", "-c",
                          script], cwd=str(world.wt), env=world.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), f"the command never ran (exit {p.poll()})"
        inside = dict(l.split("=", 1) for l in ready.read_text().splitlines() if "=" in l)
        # Not vacuous: the command really holds both secrets, so they are live right now.
        assert inside.get("AWS_SECRET_ACCESS_KEY") == secret, sorted(inside)
        assert inside.get("GH_TOKEN") == token, sorted(inside)
        hits = _holders((secret, token), p.pid)
    finally:
        release.touch()
        out, err = p.communicate(timeout=60)
    assert hits == [], "\n".join(hits)
    assert p.returncode == 0, err
    assert secret not in out + err and token not in out + err


def test_a_sandbox_writable_tool_is_refused(world, creds):
    planted = world.wt / ".venv" / "bin"
    planted.mkdir(parents=True)
    gh = write_script(planted / "gh", "#!/bin/sh\necho gho_PLANTED\n")
    creds.profile(aws=None)
    d = world.session_path("bad")
    r = world.ab("session", "create", d, "--workdir", world.wt, env={"AGENT_BOUNDARY_GH": gh})
    assert_error(r, f"gh {gh} lies in {world.wt}", "sandbox write")
    assert not d.exists()
    creds.profile(aws="static", github=False)
    r = world.ab("session", "create", d, "--workdir", world.wt,
                 env={"AGENT_BOUNDARY_AWS": "/usr/bin/true"})
    assert_error(r, "AGENT_BOUNDARY_AWS=/usr/bin/true is not an AWS CLI v2")


def test_status_never_shows_a_value(world, creds):
    creds.profile(aws="cp")
    d = world.create_session()
    env = env_of(world.run_in(d, "env"))
    secrets = (env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"], env["AWS_ACCESS_KEY_ID"])
    for args in (("status",), ("status", "--json")):
        r = world.ab("--session-dir", d, *args)
        assert_ok(r)
        assert_no_secret(r.stdout + r.stderr, *secrets)
    j = json.loads(world.ab("--session-dir", d, "status", "--json").stdout)
    assert j["credentials"]["aws"]["state"] == "valid"
    assert j["credentials"]["aws"]["tool"] == "/usr/bin/aws"
    assert j["credentials"]["github"]["state"] == "valid"


# -- Claude hook: the rewritten command and its reason ---------------------------------------------

def test_claude_hook_reason_names_credentials_never_values(world, creds, claude):
    from claude_support import allow, session_id, unwrap
    creds.profile(aws="cp")
    start = claude.session_start(session_id("creds"))
    assert_no_crash(start)
    assert start.returncode == 0, start.stderr
    sid = session_id("creds")
    d = claude.session_dir("creds")
    h = allow(claude.bash(sid, "aws sts get-caller-identity"))
    assert "AWS credentials of profile `cp` exported at launch" in h.reason
    assert "GitHub token exported at launch" in h.reason
    run = claude.run_rewritten(claude.bash(sid, "env").updated["command"])
    env = env_of(run)
    secrets = (env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"], env["GH_TOKEN"])
    assert env["AWS_ACCESS_KEY_ID"].startswith("ASIACP")
    # What `run env` shows is what the agent's commands get.
    run_env = env_of(world.run_in(d, "env"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
              "GH_TOKEN", "GIT_CONFIG_VALUE_1"):
        assert run_env[k] == env[k], k
    h = allow(claude.bash(sid, "echo $AWS_SECRET_ACCESS_KEY"))
    assert "AWS credentials of profile `cp` injected (valid until" in h.reason
    assert "GitHub token injected" in h.reason
    assert unwrap(h.updated["command"])["inner"] == "echo $AWS_SECRET_ACCESS_KEY"
    for text in (h.reason, h.updated["command"], h.stdout, h.stderr, start.stdout, start.stderr,
                 claude.env_file.read_text() if claude.env_file.exists() else ""):
        assert_no_secret(text, *secrets)


def test_claude_hook_reason_reports_a_cached_failure(world, creds, claude):
    from claude_support import allow, session_id
    creds.fail.write_text("")
    creds.profile(aws="cp", github=False)
    sid = session_id("fail")
    claude.start("fail")
    run = claude.run_rewritten(claude.bash(sid, "true").updated["command"])
    assert_ok(run)
    assert "no AWS creds" in run.stderr
    h = allow(claude.bash(sid, "aws s3 ls"))
    assert "(no AWS creds: " in h.reason and "cred-process: token expired" in h.reason, h.reason
    assert h.reason.endswith(f"{EM_DASH} try `aws sso login`)"), h.reason
    assert_no_secret(h.reason + h.updated["command"])


# -- kubeconfig ------------------------------------------------------------------------------------

@pytest.fixture
def kube_source(world):
    d = world.home / ".kube"
    d.mkdir()
    (d / "config").write_text(KUBECONFIG_TEXT)
    os.chmod(d / "config", 0o600)
    return d / "config"


def test_kubeconfig_has_the_accounts_cluster_and_orbstack(world, creds, kube_source):
    creds.profile(aws="eks-prod", github=False, kube="{eks: true, orbstack: true}")
    d = world.create_session()
    kc = d / "kubeconfig"
    assert kc.is_file() and file_mode(kc) == 0o600
    text = kc.read_text()
    assert EKS_PROD in text and EKS_DEV not in text
    assert "name: agent-boundary-prod" in text
    assert "current-context: agent-boundary-prod" in text
    assert "--profile" not in text
    assert "command: /usr/bin/aws" in text
    assert "interactiveMode: Never" in text
    assert "client-key-data: T1JCLUtFWS1TRUNSRVQ=" in text  # orbstack copied verbatim
    # Readable inside (the session dir is otherwise denied), exported as KUBECONFIG.
    env = env_of(world.run_in(d, "env"))
    assert env["KUBECONFIG"] == str(kc)
    r = world.run_in(d, "cat", kc)
    assert_ok(r)
    assert r.stdout == text
    r = world.run_in(d, "cat", kube_source)
    assert r.returncode != 0 and "SECRET" not in r.stdout
    r = world.run_in(d, "cat", d / "boundary.json")
    assert r.returncode != 0


def test_kubeconfig_warnings_do_not_fail_the_session(world, creds, kube_source):
    # Account 333... has no cluster: EKS is a warning, orbstack still comes.
    with open(world.aws_config, "a") as f:
        f.write("\n[profile other]\nrole_arn = arn:aws:iam::333333333333:role/x\n"
                "source_profile = static\n")
    creds.profile(aws="other", github=False, kube="{eks: true, orbstack: true}")
    r = world.ab("session", "create", world.session_path(), "--workdir", world.wt)
    assert_ok(r)
    assert "aws profile 'other' maps to 0 EKS clusters" in r.stderr
    kc = (world.session_path() / "kubeconfig").read_text()
    assert "orbstack" in kc and "agent-boundary-" not in kc
    # A malformed source kubeconfig: a warning, a session without kubeconfig.
    kube_source.write_text("clusters: [\n")
    r = world.ab("--session-dir", world.session_path(), "reload")
    assert_ok(r)
    assert "warning: kube: cannot read the source kubeconfig" in r.stderr
    assert not (world.session_path() / "kubeconfig").exists()
    assert "KUBECONFIG" not in env_of(world.run_in(world.session_path(), "env"))


def test_kubeconfig_source_follows_KUBECONFIG_and_goes_with_the_profile(world, creds, kube_source):
    other = world.root / "other-kubeconfig"
    other.write_text(KUBECONFIG_TEXT.replace("127.0.0.1:26443", "127.0.0.1:9999"))
    creds.profile(aws=None, github=False, kube="{orbstack: true}")
    d = world.create_session(env={"KUBECONFIG": f"{other}:{kube_source}"})
    assert "127.0.0.1:9999" in (d / "kubeconfig").read_text()
    creds.profile(aws=None, github=False)
    assert_ok(world.ab("--session-dir", d, "reload"))
    assert not (d / "kubeconfig").exists()


def test_kubeconfig_reaches_bash_commands_through_the_claude_env_file(world, creds, kube_source,
                                                                      claude):
    """README: SessionStart exports KUBECONFIG through CLAUDE_ENV_FILE; Claude sources that
    file before every Bash command, so kubectl inside finds the session's kubeconfig."""
    from claude_support import allow, session_id
    creds.profile(aws="eks-prod", github=False, kube="{eks: true, orbstack: true}")
    d = claude.start("kube")
    kc = d / "kubeconfig"
    assert kc.is_file()
    exports = [l for l in claude.env_file.read_text().splitlines()
               if l.startswith("export KUBECONFIG=")]
    assert exports == [f"export KUBECONFIG={shlex.quote(str(kc))}"], exports
    rewritten = allow(claude.bash(session_id("kube"), 'printf %s "$KUBECONFIG"')).updated["command"]
    r = claude.run_rewritten(f". '{claude.env_file}' && {rewritten}")
    assert_ok(r)
    assert r.stdout == str(kc)
