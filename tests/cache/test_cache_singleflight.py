"""Single flight: N concurrent identical requests pay for one call."""

from __future__ import annotations

import asyncio

import pytest

from guard.cache.singleflight import SingleFlight


class CountingCall:
    """A slow call that counts how often it really ran."""

    def __init__(self, result: str = "verdict", error: Exception | None = None, delay: float = 0.05) -> None:
        self.calls = 0
        self.result, self.error, self.delay = result, error, delay

    async def __call__(self) -> str:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.result


async def test_concurrent_identical_requests_make_one_call() -> None:
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall()
    results = await asyncio.gather(*(flight.do("same", call) for _ in range(20)))
    assert results == ["verdict"] * 20
    assert call.calls == 1
    assert flight.in_flight() == 0


async def test_different_keys_do_not_share() -> None:
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall()
    await asyncio.gather(flight.do("a", call), flight.do("b", call), flight.do("a", call))
    assert call.calls == 2


async def test_a_finished_call_is_not_reused() -> None:
    """Single flight shares a call in progress; remembering results is the cache's job."""
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall()
    await flight.do("k", call)
    await flight.do("k", call)
    assert call.calls == 2


async def test_an_error_reaches_every_waiter_and_is_not_kept() -> None:
    flight: SingleFlight[str] = SingleFlight()
    failing = CountingCall(error=RuntimeError("model down"))
    results = await asyncio.gather(*(flight.do("k", failing) for _ in range(5)), return_exceptions=True)
    assert failing.calls == 1
    assert all(isinstance(r, RuntimeError) and str(r) == "model down" for r in results)
    working = CountingCall()
    assert await flight.do("k", working) == "verdict" and working.calls == 1


async def test_a_cancelled_waiter_does_not_cancel_the_call_for_the_others() -> None:
    """One hook timing out must not fail the other requests sharing its call, nor cost another call."""
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall(delay=0.2)
    first = asyncio.create_task(flight.do("k", call))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(flight.do("k", call))
    await asyncio.sleep(0.01)
    second.cancel()
    assert await first == "verdict"
    assert second.cancelled() and call.calls == 1


async def test_when_the_caller_running_the_call_is_cancelled_a_waiter_takes_over() -> None:
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall(delay=0.2)
    first = asyncio.create_task(flight.do("k", call))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(flight.do("k", call))
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(first, 0.05)
    assert await second == "verdict", "the waiter got a verdict, not the first caller's cancellation"
    assert call.calls == 2 and flight.in_flight() == 0


async def test_the_first_caller_runs_the_call_in_its_own_task() -> None:
    """No task of its own: on a busy service that task would wait behind every other ready request."""
    flight: SingleFlight[asyncio.Task[object] | None] = SingleFlight()

    async def which_task() -> asyncio.Task[object] | None:
        return asyncio.current_task()

    async def caller() -> bool:
        return await flight.do("k", which_task) is asyncio.current_task()

    assert await asyncio.create_task(caller())


def test_each_event_loop_gets_its_own_call() -> None:
    """decide_sync runs a fresh loop per call; a task from a finished loop is never awaited."""
    flight: SingleFlight[str] = SingleFlight()
    call = CountingCall()
    assert asyncio.run(flight.do("k", call)) == "verdict"
    assert asyncio.run(flight.do("k", call)) == "verdict"
    assert call.calls == 2
