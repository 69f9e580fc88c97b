"""`agent-boundary compare`: one corpus of scenarios through every installed backend.

The installed binary builds its own worlds (under /var/tmp/agent-boundary-compare-*), one
session per backend from the corpus's profile, runs every scenario and prints a verdict
matrix and medians. Every backend plugin installed in the prefix runs (nono always; srt and
devcontainer when installed): a backend that differs from the profile's intent without
declaring it in its deny-state fails the run. No timing is asserted, only that it is there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import assert_error, assert_no_crash, assert_ok

SCRATCH = Path("/var/tmp")
# Prefixes of the world's fake secrets: no report may contain one.
SECRET_MARKERS = ("AB-COMPARE-FAKE-SECRET-", "AB-COMPARE-FAKE-SSH-KEY-", "AB-COMPARE-PRIVATE-")
# Generous: a container backend may build its image on first use.
TIMEOUT = 3600


def installed_backends(prefix: Path) -> list[str]:
    plugins = prefix / "lib" / "agent-boundary" / "plugins"
    return sorted(re.sub(r"^backend-(.*)\.so$", r"\1", p.name)
                  for p in plugins.glob("backend-*.so"))


def scratch_dirs() -> set[str]:
    return {p.name for p in SCRATCH.glob("agent-boundary-compare-*")}


def assert_clean(result, before: set[str]) -> None:
    out = result.stdout + result.stderr
    for marker in SECRET_MARKERS:
        assert marker not in out, f"a secret ({marker}...) reached the output:\n{out}"
    assert scratch_dirs() - before == set(), "compare left its worlds behind"


def test_every_installed_backend_runs_the_whole_corpus(world, ab_prefix):
    backends = installed_backends(ab_prefix)
    before = scratch_dirs()
    r = world.ab("compare", "--json", "--runs", "3", timeout=TIMEOUT)
    assert_no_crash(r)
    assert_clean(r, before)
    report = json.loads(r.stdout)
    # All three ship with this tree: the corpus must have run through each of them.
    assert {"nono", "srt", "devcontainer"} <= set(backends), backends
    assert [b["name"] for b in report["backends"]] == backends, r.stderr
    ids = [s["id"] for s in report["scenarios"]]
    assert len(ids) == len(set(ids)) >= 30
    for required in ("read-home-ssh-key", "create-denied-absent-leaf", "read-symlink-chain",
                     "read-symlink-chain-to-denied", "git-add-commit", "write-git-hook",
                     "append-git-config", "write-agent-settings", "aws-credentials-in-env",
                     "probe-read-home-ssh-key", "probe-write-git-hook"):
        assert required in ids, required
    failures = []
    for b in report["backends"]:
        assert b["error"] is None, f"{b['name']}: {b['error']}"
        assert b["version"], b
        assert sorted(b["results"]) == sorted(ids), b["name"]
        for sid, cell in b["results"].items():
            assert cell["outcome"] in ("ok", "declared", "FAIL")
            if cell["outcome"] == "FAIL":
                failures.append(f"{b['name']} {sid}: {cell['detail']}")
        # Credentials are injected by every backend: never excused.
        assert b["results"]["aws-credentials-in-env"]["outcome"] == "ok", b["name"]
        t = b["timing"]
        assert t and "error" not in t, f"{b['name']}: {t}"
        assert t["runs"] == 3
        for key in ("bare_true_ms", "wrapped_true_ms", "probe_ms"):
            assert isinstance(t[key], (int, float)) and t[key] > 0, (b["name"], key, t)
        assert t["overhead_ms"] == pytest.approx(t["wrapped_true_ms"] - t["bare_true_ms"], abs=0.2)
    assert failures == [], "\n".join(failures)
    assert report["passed"] is True
    assert report["tally"]["fail"] == 0
    assert_ok(r)


def test_nono_text_matrix(world):
    before = scratch_dirs()
    r = world.ab("compare", "--backend", "nono", "--runs", "3", timeout=TIMEOUT)
    assert_ok(r)
    assert_clean(r, before)
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("scenario "))
    assert re.match(r"scenario\s+kind\s+intent\s+nono \S+$", header), header
    rows = [line.split() for line in lines[lines.index(header) + 1:] if line.strip()]
    rows = rows[:next(i for i, row in enumerate(rows) if row[0] == "median")]
    assert len(rows) >= 30
    for row in rows:
        assert row[1] in ("command", "probe") and row[2] in ("allowed", "denied"), row
        assert row[3] == "ok", f"{row}:\n{r.stdout}"
    assert re.search(r"^median of 3 runs, ms:$", r.stdout, re.M)
    assert re.search(r"^nono \S+\s+[\d.]+\s+[\d.]+\s+-?[\d.]+\s+[\d.]+$", r.stdout, re.M), r.stdout
    assert r.stdout.rstrip().endswith("0 FAIL)")
    assert "result: PASS" in r.stdout


def test_unknown_backend_fails_the_run(world):
    before = scratch_dirs()
    r = world.ab("compare", "--backend", "nono", "--backend", "no-such-backend", "--runs", "1",
                 timeout=TIMEOUT)
    assert_error(r, "no-such-backend: no session:", "result: FAIL", code=1)
    assert_clean(r, before)
    # nono still ran, and is reported.
    assert re.search(r"^read-home-ssh-key\s+command\s+denied\s+ok\s+-$", r.stdout, re.M), r.stdout


def test_runs_must_be_positive(world):
    r = world.ab("compare", "--runs", "0")
    assert_error(r, "--runs must be between 1 and", code=2)


# The same actions as these corpus scenarios, done by this test in its own world, with the host
# effect judged here: (scenario id, command in the worktree, the effect seen on the host).
SAMPLE = {
    "read-home-ssh-key": "cat ~/.ssh/id_rsa",
    "write-git-hook": "printf x > {repo}/.git/hooks/pre-commit",
    "append-git-config": "printf '[x]\\n' >> {repo}/.git/config",
    "write-agent-settings": "mkdir -p .claude && printf '{{}}' > .claude/settings.json",
    "git-add-commit": "printf c > committed.txt && git add committed.txt && "
                      "git -c user.name=t -c user.email=t@e.invalid commit -q -m sample",
}


def _host_effect(world, session, scenario: str) -> bool:
    """True when the action really took effect on the host (judged outside the boundary)."""
    from conftest import SSH_SECRET
    git_dir = world.repo / ".git"
    before = {p: p.read_bytes() if p.is_file() else None
              for p in (git_dir / "hooks" / "pre-commit", git_dir / "config",
                        world.wt / ".claude" / "settings.json")}
    head = world.git("rev-parse", "HEAD").stdout
    r = world.run_in(session, "/bin/bash", "-c", SAMPLE[scenario].format(repo=world.repo))
    if scenario == "read-home-ssh-key":
        return SSH_SECRET in r.stdout + r.stderr
    if scenario == "git-add-commit":
        return world.git("rev-parse", "HEAD").stdout != head
    changed = [p for p, old in before.items()
               if (p.read_bytes() if p.is_file() else None) != old]
    return bool(changed)


@pytest.mark.protects("landlock", "mount-protection")
def test_compare_grading_agrees_with_host_effects_seen_by_the_test(world, session):
    """compare grades its own cells; for a sample, this test does the same actions in its
    own world and judges the host effect itself: an `ok` cell must match what really happens
    with the profile's intent, and the sample must include both intents."""
    r = world.ab("compare", "--backend", "nono", "--json", "--runs", "1", timeout=TIMEOUT)
    report = json.loads(r.stdout)
    intents = {s["id"]: s["intent"] for s in report["scenarios"]}
    [nono] = report["backends"]
    for scenario in SAMPLE:
        effect = _host_effect(world, session, scenario)
        assert effect == (intents[scenario] == "allowed"), (
            f"{scenario}: intent {intents[scenario]}, but the host effect was "
            f"{'seen' if effect else 'absent'}")
        assert nono["results"][scenario]["outcome"] == "ok", (scenario, nono["results"][scenario])
    assert set(intents[s] for s in SAMPLE) == {"allowed", "denied"}
    assert_ok(r)
