"""The `LearningJobStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from zengram.chat.domain.learning import JobStatus, LearningJob, LearnMode
from zengram.chat.domain.recalls import LearningOutcome
from zengram.chat.domain.tenancy import new_id

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def job(seconds: float = 0, chat: str = "c1", project: str = "acme") -> LearningJob:
    return LearningJob(id=new_id("job"), project_id=project, subject_id="alice", chat_id=chat, event_id="rcl_1",
                       memories=LearnMode.AUTO, messages=[{"role": "user", "content": "I love hiking"}],
                       not_before=at(seconds), created_at=at(seconds), updated_at=at(seconds))


def test_a_due_job_is_claimed_once(stores: ChatStores) -> None:
    waiting = job()
    stores.learning.put(waiting)
    with ThreadPoolExecutor(8) as pool:
        claims = list(pool.map(lambda _: stores.learning.claim(waiting.id, at(1), 60), range(8)))
    won = [claim for claim in claims if claim is not None]
    assert len(won) == 1 and won[0].status is JobStatus.RUNNING and won[0].attempts == 1
    assert stores.learning.get(waiting.id) == won[0]
    assert stores.learning.claim("job_unknown", at(1), 60) is None


def test_a_job_is_due_at_its_time_or_when_its_lease_runs_out(stores: ChatStores) -> None:
    later, now = job(seconds=100), job(seconds=0)
    stores.learning.put(later)
    stores.learning.put(now)
    assert [j.id for j in stores.learning.due(at(50), 10)] == [now.id]
    assert stores.learning.claim(later.id, at(50), 60) is None  # not yet
    running = stores.learning.claim(now.id, at(50), 60)
    assert running is not None
    assert [j.id for j in stores.learning.due(at(100), 10)] == [later.id]
    assert {j.id for j in stores.learning.due(at(110), 10)} == {later.id, now.id}  # the lease ran out at 110
    retried = stores.learning.claim(now.id, at(111), 60)
    assert retried is not None and retried.attempts == 2


def test_finished_and_failed_jobs_are_kept_and_listed(stores: ChatStores) -> None:
    done, failing, other = job(0), job(1), job(2, chat="c2")
    for each in (done, failing, other):
        stores.learning.put(each)
    stores.learning.put(done.claimed(at(3), timedelta(seconds=60)).finished(LearningOutcome(status="done"), at(4)))
    failed = failing.claimed(at(3), timedelta(seconds=60)).failed("boom", at(4), max_attempts=1,
                                                                  retry_after=timedelta(seconds=30))
    stores.learning.put(failed)
    elsewhere = job(3, project="globex")
    stores.learning.put(elsewhere)
    assert failed.status is JobStatus.FAILED
    assert stores.learning.due(at(1000), 10) == [other, elsewhere]
    assert [j.id for j in stores.learning.jobs("acme", None, None, 10)] == [other.id, failing.id, done.id]
    assert [j.id for j in stores.learning.jobs("acme", "c1", JobStatus.FAILED, 10)] == [failing.id]
    assert stores.learning.jobs("acme", "c2", JobStatus.DONE, 10) == []
