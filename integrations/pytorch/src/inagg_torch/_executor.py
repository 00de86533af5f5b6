"""How a process group runs its collectives: one at a time, in submission order, on the group's own thread or on the
caller's (:class:`SerialExecutor`); and the Work a caller holds meanwhile (:class:`InaggWork`)."""

from __future__ import annotations

import queue
import threading
from datetime import timedelta
from typing import Callable, Optional

import torch.distributed as dist
from torch.futures import Future

from . import errors


def timeout_seconds(timeout: Optional[timedelta]) -> Optional[float]:
    """A Work.wait timeout in seconds; None for no limit (torch passes 0 for none)."""
    if timeout is None:
        return None
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    return seconds if seconds > 0 else None


class SerialExecutor:
    """Runs collectives one at a time in submission order: on its thread, or on the caller's when the caller waits for
    one that nothing has started and all before it finished (a synchronous all_reduce: two thread hand-offs fewer per
    call)."""

    def __init__(self, name: str) -> None:
        self._queue: "queue.Queue[Optional[_Task]]" = queue.Queue()
        self._claim = threading.Lock()
        self._execute = threading.Lock()
        self._submitted = 0
        self._finished = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, body: Callable[[], None], result, inline: bool = True, name: str = "allreduce") -> "InaggWork":
        """Queues ``body``; the Work's value is ``result`` once it ran. ``inline``: a ``wait()`` may run it on the
        waiting thread (False for what must stay on the group's thread, e.g. device copies on its streams)."""
        with self._claim:
            self._submitted += 1
            task = _Task(self._submitted, body, Future(), result)
        self._queue.put(task)
        return InaggWork(task.future, (lambda: self._take(task, inline=True) and self._execute_task(task))
                         if inline else None, name)

    def shutdown(self, timeout: float = 60) -> None:
        """Stops the thread after what is queued; waits up to ``timeout`` s for it."""
        self._queue.put(None)
        self._thread.join(timeout=timeout)

    def stop(self) -> None:
        """Asks the thread to stop after what is queued, without waiting (for ``__del__``)."""
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            if self._take(task, inline=False):
                self._execute_task(task)

    def _take(self, task: "_Task", inline: bool) -> bool:
        """Claims ``task`` for this thread: the group's thread takes any task nobody took (it dequeues them in order);
        a waiting caller only the next one to run, so that collectives never overtake each other."""
        with self._claim:
            if task.claimed or (inline and task.sequence != self._finished + 1):
                return False
            task.claimed = True
            return True

    def _execute_task(self, task: "_Task") -> None:
        error: Optional[BaseException] = None
        with self._execute:
            try:
                task.body()
            except BaseException as ex:  # noqa: BLE001 - handed to the caller through the future
                error = ex
            with self._claim:
                self._finished = task.sequence  # before the future: its waiter may run the next one at once
        if error is not None:
            task.future.set_exception(error)
        else:
            task.future.set_result(task.result)


class _Task:
    """One collective of a group: its place in the group's order, what it runs, and who took it."""

    __slots__ = ("sequence", "body", "future", "result", "claimed")

    def __init__(self, sequence: int, body: Callable[[], None], future: Future, result) -> None:
        self.sequence = sequence
        self.body = body
        self.future = future
        self.result = result
        self.claimed = False


class InaggWork(dist._Work):
    """A collective in flight: ``wait()`` returns when the result is in the tensors and raises the collective's error
    (Works made by ``_create_work_from_future`` swallow it). A ``wait()`` on a collective that nothing started yet, with
    every earlier one finished, runs it on the waiting thread (what a synchronous ``all_reduce`` does)."""

    def __init__(self, future: Future, run_here: Optional[Callable[[], object]] = None,
                 name: str = "collective") -> None:
        super().__init__()
        self._future = future
        self._run_here = run_here
        self._name = name

    def wait(self, timeout: Optional[timedelta] = None) -> bool:
        """Waits for the result; with a ``timeout`` (0: none), raises :class:`errors.WaitTimeoutError` past it (the
        collective goes on, on the group's thread)."""
        seconds = timeout_seconds(timeout)
        if seconds is None:
            if self._run_here is not None and not self._future.done():
                self._run_here()
        elif not self._future.done():
            done = threading.Event()
            self._future.add_done_callback(lambda _: done.set())
            if not done.wait(seconds):
                raise errors.WaitTimeoutError(f"inagg: {self._name} did not finish within the wait timeout of "
                                              f"{seconds:g} s")
        self._future.wait()  # raises the collective's exception
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        if not self._future.done():
            return False
        try:
            self._future.value()
            return True
        except Exception:  # noqa: BLE001 - the question is only whether it failed
            return False

    def exception(self):
        try:
            self._future.value()
            return None
        except Exception as ex:  # noqa: BLE001
            return ex

    def result(self):
        return self._future.value()

    def get_future(self) -> Future:
        return self._future
