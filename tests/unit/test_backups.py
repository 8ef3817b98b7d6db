"""Backups kept shorter than the erasure deadline (docs/privacy.md, "Backups"): the settings refuse a retention at or
past the deadline; deploy.backup's names, its prune by age, its refusal of a backup past retention, and the replay
entries it hands back (those completed since the backup, one per erasure); the replay list's sealed subject. The
restore itself is tests/integration/test_backup_restore.py."""
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core import settings
from core.ids import utcnow
from deploy import backup
from services.accounts.privacy import replay
from services.accounts.records import ReplayEntryRecord
from services.accounts.secret_keys import ERASURE_REPLAY, SecretKeys

NOW = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)
KEEP = timedelta(days=25)


@pytest.fixture
def load(monkeypatch):
    for name in list(os.environ):
        monkeypatch.delenv(name)

    def load(**env) -> settings.Settings:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return settings.load()
    return load


def test_backups_are_kept_25_days_and_never_up_to_the_30_day_erasure_deadline(load):
    s = load()
    assert (s.backup_retention_days, s.erasure_deadline_days, s.backup_dir) == (25.0, 30.0, None)
    assert load(BACKUP_RETENTION_DAYS="7", BACKUP_DIR="/var/backups/sb").backup_dir == Path("/var/backups/sb")
    for days in ("30", "45"):
        with pytest.raises(SystemExit, match=r"^BACKUP_RETENTION_DAYS: must be below ERASURE_DEADLINE_DAYS \(30\)"):
            load(BACKUP_RETENTION_DAYS=days)


def test_a_backup_is_named_after_its_utc_time_and_other_files_are_not_ours():
    name = backup.name_of(datetime(2026, 3, 1, 9, 5, 7, tzinfo=UTC))
    assert name == "switchboard-20260301T090507Z.dump"
    assert backup.taken_at(Path(name)) == datetime(2026, 3, 1, 9, 5, 7, tzinfo=UTC)
    assert backup.taken_at(Path("switchboard-20260301T090507Z.replay.json")) is not None
    for other in ("switchboard-20260301T090507Z.dump.partial", "notes.txt", "switchboard-latest.dump"):
        assert backup.taken_at(Path(other)) is None


def write(folder: Path, days_ago: float, suffix: str = backup.DUMP, now: datetime = NOW) -> Path:
    path = folder / backup.name_of(now - timedelta(days=days_ago), suffix)
    path.write_text("[]")
    return path


def test_prune_deletes_the_backups_and_replay_lists_past_retention_and_nothing_else(tmp_path):
    old = [write(tmp_path, 25.5), write(tmp_path, 25.5, backup.REPLAY), write(tmp_path, 40)]
    kept = [write(tmp_path, 24.9), write(tmp_path, 1, backup.REPLAY), write(tmp_path, 0)]
    (tmp_path / "notes.txt").write_text("an operator's")
    assert sorted(backup.expired(tmp_path, NOW, KEEP)) == sorted(old)
    assert [p for _, p in backup.ours(tmp_path, backup.DUMP)] == [old[2], old[0], kept[0], kept[2]]  # oldest first


def test_prune_deletes_the_files(tmp_path):
    now = utcnow()
    old, kept = write(tmp_path, 30, now=now), write(tmp_path, 20, backup.REPLAY, now=now)
    assert backup.prune(tmp_path, KEEP) == [old]
    assert not old.exists() and kept.exists()


def test_a_backup_past_retention_is_refused_unless_a_reason_is_given():
    assert backup.refusal(NOW - timedelta(days=24), NOW, KEEP, None) is None
    why = backup.refusal(NOW - timedelta(days=26), NOW, KEEP, None)
    assert why is not None and "26.0 days old" in why and "--force" in why and "come back" in why
    assert backup.refusal(NOW - timedelta(days=26), NOW, KEEP, "the newer backups are damaged") is None


def test_a_restore_refuses_a_backup_past_retention_before_touching_any_database(tmp_path):
    old = write(tmp_path, 26)
    with pytest.raises(SystemExit, match="days old, older than BACKUP_RETENTION_DAYS"):
        backup.restore("postgresql://nobody@127.0.0.1:1/none", tmp_path, KEEP, old.name, None)
    with pytest.raises(SystemExit, match="no such backup"):
        backup.restore("postgresql://nobody@127.0.0.1:1/none", tmp_path, KEEP, "switchboard-x.dump", None)


def entry(erasure_id: str, completed: datetime) -> dict:
    return {"erasure_id": erasure_id, "business_id": "b", "suppress": True, "subject": "v1:x",
            "completed_at": completed}


def test_the_erasures_replayed_are_those_completed_since_the_backup_once_each_from_every_source():
    taken = NOW - timedelta(days=3)
    live = [entry("before", taken - timedelta(days=1)), entry("after", taken + timedelta(hours=1)),
            entry("again", taken + timedelta(days=2))]
    beside_a_newer_backup = [entry("again", taken + timedelta(days=1)), entry("lost-with-the-server", taken),
                             entry("just-before", taken - timedelta(minutes=1))]
    found = backup.to_replay(taken, live, beside_a_newer_backup)
    assert [e["erasure_id"] for e in found] == ["just-before", "lost-with-the-server", "after", "again"]
    assert found[-1]["completed_at"] == taken + timedelta(days=2)  # its latest completion
    assert backup.load_entries(backup.dump_entries(found)) == found


def test_the_schemas_a_dump_holds_are_read_from_its_listing():
    listing = (";\n; Archive created at 2026-03-01\n6; 2615 16385 SCHEMA - accounts postgres\n"
               "3390; 0 0 ACL - SCHEMA accounts postgres\n8; 2615 16891 SCHEMA - sdr postgres\n")
    assert backup.schemas_of(listing) == ["accounts", "sdr"]


def test_a_replay_entry_opens_only_for_its_erasure_and_under_a_secret_still_held():
    keys = SecretKeys("secret")
    sealed = replay.seal_subject(keys, "e1", ["+14155550123"], ["dana@example.com"])
    assert sealed.startswith("v1:") and "4155550123" not in sealed and "dana" not in sealed

    def entry_of(erasure_id: str, subject: str = sealed) -> ReplayEntryRecord:
        return ReplayEntryRecord(erasure_id, "b", True, subject, NOW, NOW)

    subject = replay.open_subject(keys, entry_of("e1"))
    assert subject is not None and (subject.phones, subject.emails) == (("+14155550123",), ("dana@example.com",))
    assert replay.open_subject(keys, entry_of("e2")) is None  # moved to another erasure
    assert replay.open_subject(SecretKeys("another"), entry_of("e1")) is None
    rotated = SecretKeys("new", version=2, previous="secret")
    assert replay.open_subject(rotated, entry_of("e1")) == subject  # the previous secret still held
    assert replay.open_subject(SecretKeys("new", version=2), entry_of("e1")) is None  # no longer held
    assert keys.open(ERASURE_REPLAY, "v1:not base64!", b"e1") is None and keys.open(ERASURE_REPLAY, "x", b"e1") is None


def test_an_erasure_queued_again_runs_from_its_first_step_with_its_subject_back():
    keys = SecretKeys("secret")
    sealed = replay.seal_subject(keys, "e1", ["+14155550123"], [])
    record = ReplayEntryRecord("e1", "b", False, sealed, NOW - timedelta(days=2), NOW)
    subject = replay.open_subject(keys, record)
    assert subject is not None
    row = replay.requeued(record, subject, NOW)
    assert (row["id"], row["business_id"], row["status"], row["suppress"]) == ("e1", "b", "queued", False)
    assert (row["phones"], row["emails"], row["subject_key"]) == (["+14155550123"], [], "+14155550123|")
    assert (row["reports"], row["found"], row["attempts"], row["completed_at"], row["next_attempt_at"]) == (
        {}, {}, 0, None, NOW)
    assert row["phone_masked"].endswith("0123") and row["lease_token"] is None
