"""The embedded learning worker: a bounded queue in front of the stored jobs, and a sweep that runs what the queue
could not hold (or a restart left behind)."""

from __future__ import annotations

import threading
import time

from zengram.adapters.system.learning_worker import LearningWorker


class Jobs:
    """Stands in for the job store and LearningService.run: a job runs once, whoever asks first."""

    def __init__(self, waiting: list[str], gate: threading.Event | None = None) -> None:
        self.waiting = list(waiting)
        self.ran: list[str] = []
        self.gate = gate
        self.lock = threading.Lock()

    def run(self, job_id: str) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        with self.lock:
            if job_id in self.waiting:
                self.waiting.remove(job_id)
                self.ran.append(job_id)

    def run_due(self) -> int:
        due = list(self.waiting)
        for job_id in due:
            self.run(job_id)
        return len(due)


def settle(worker: LearningWorker, jobs: Jobs, expected: int) -> None:
    deadline = time.monotonic() + 20  # only ends a stuck run
    while len(jobs.ran) < expected and time.monotonic() < deadline:
        time.sleep(0.01)


def test_jobs_stored_before_a_restart_run_when_the_worker_starts() -> None:
    jobs = Jobs(["stored-1", "stored-2"])
    worker = LearningWorker(jobs.run, jobs.run_due, queue_size=4, sweep_seconds=60)
    worker.start()
    settle(worker, jobs, 2)
    worker.stop()
    assert sorted(jobs.ran) == ["stored-1", "stored-2"]


def test_a_full_queue_never_blocks_and_loses_nothing() -> None:
    gate = threading.Event()
    jobs = Jobs([f"job-{n}" for n in range(6)], gate)
    worker = LearningWorker(jobs.run, jobs.run_due, queue_size=2, sweep_seconds=0.05)
    for n in range(6):  # the worker is stuck on its first job: the queue fills, and dispatch still returns
        worker.dispatch(f"job-{n}")
    assert jobs.ran == []  # nothing could run yet: reaching this line is the proof that dispatch never waited
    gate.set()
    settle(worker, jobs, 6)
    worker.stop()
    assert sorted(jobs.ran) == [f"job-{n}" for n in range(6)]


def test_stop_lets_the_running_job_finish() -> None:
    gate = threading.Event()
    jobs = Jobs(["long"], gate)
    worker = LearningWorker(jobs.run, jobs.run_due, queue_size=1, sweep_seconds=60)
    worker.dispatch("long")
    threading.Timer(0.2, gate.set).start()
    worker.stop(timeout=20)
    assert jobs.ran == ["long"] and worker.idle()
