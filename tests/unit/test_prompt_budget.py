"""The prompt budget: requests admitted by count and by prompt tokens in flight, first come first served with
bounded backfilling (live/schedule.py). Real asyncio, short real sleeps; no server."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.live.schedule import LONG_PROMPT_TOKENS, PromptBudget, PromptSpeed, prompt_chars


class Tracker:
    """Records what is in flight whenever a request starts, and the order requests started in."""

    def __init__(self, budget: PromptBudget) -> None:
        self.budget = budget
        self.count = 0
        self.tokens = 0.0
        self.peaks: list[tuple[int, float, float]] = []  # (count, tokens, the starting request's tokens)
        self.started: list[str] = []

    async def run(self, name: str, chars: int, hold_s: float, delay_s: float = 0.0) -> float:
        await asyncio.sleep(delay_s)
        tokens = self.budget.estimate(chars)
        async with self.budget.admit(chars) as waited:
            self.count += 1
            self.tokens += tokens
            self.peaks.append((self.count, self.tokens, tokens))
            self.started.append(name)
            await asyncio.sleep(hold_s)
            self.count -= 1
            self.tokens -= tokens
        return waited


def run(coro):
    """A scheduling bug shows as a request that never starts: fail rather than hang."""
    return asyncio.run(asyncio.wait_for(coro, timeout=30))


def test_without_a_token_budget_it_is_a_first_come_first_served_count_limit() -> None:
    async def main() -> Tracker:
        tracker = Tracker(PromptBudget(limit=2, timeout_s=10, tokens="off"))
        sizes = [90_000, 30, 90_000, 30, 30]  # sizes do not matter with the budget off
        await asyncio.gather(*(tracker.run(f"r{i}", size, 0.02, delay_s=i * 0.001) for i, size in enumerate(sizes)))
        return tracker

    tracker = run(main())
    assert max(count for count, _, _ in tracker.peaks) == 2
    assert tracker.started == ["r0", "r1", "r2", "r3", "r4"]
    assert tracker.budget.stats.held == 0 and tracker.budget.stats.passed == 0


@given(
    st.lists(st.tuples(st.integers(1, 60_000), st.integers(0, 3)), min_size=1, max_size=12),
    st.integers(1, 4),
    st.integers(1_000, 40_000),
)
def test_tokens_in_flight_stay_within_the_budget_unless_one_prompt_runs_alone(
    requests: list[tuple[int, int]], limit: int, capacity: int
) -> None:
    async def main() -> Tracker:
        tracker = Tracker(PromptBudget(limit=limit, timeout_s=5, tokens=capacity))
        await asyncio.gather(
            *(tracker.run(f"r{i}", chars, hold / 1000, delay_s=i / 10_000) for i, (chars, hold) in enumerate(requests))
        )
        return tracker

    tracker = run(main())
    assert sorted(tracker.started) == sorted(f"r{i}" for i in range(len(requests)))  # every request ran
    for count, tokens, own in tracker.peaks:
        assert count <= limit
        assert tokens <= capacity + 1e-6 or count == 1, (count, tokens, own)


def test_before_a_speed_is_known_short_prompts_go_first_and_long_ones_one_at_a_time() -> None:
    long_chars = int(LONG_PROMPT_TOKENS * 3.0) + 30  # at the default 3 characters a token

    async def main() -> Tracker:
        tracker = Tracker(PromptBudget(limit=4, timeout_s=10))
        await asyncio.gather(
            tracker.run("long1", long_chars, 0.05),
            tracker.run("long2", long_chars, 0.05, delay_s=0.001),
            tracker.run("short1", 300, 0.01, delay_s=0.002),
            tracker.run("short2", 300, 0.01, delay_s=0.003),
        )
        return tracker

    tracker = run(main())
    longs = [count for count, _, own in tracker.peaks if own >= LONG_PROMPT_TOKENS]
    # the long ones wait a moment for the rest to queue; the short ones, shortest first, pass them
    assert tracker.started == ["short1", "short2", "long1", "long2"]
    # no answer has told the speed (this tracker reports none): each long prompt starts alone
    assert longs == [1, 1]
    assert tracker.budget.stats.held == 2 and tracker.budget.stats.passed == 2


def test_a_head_passed_for_half_a_timeout_is_passed_no_more() -> None:
    async def main() -> Tracker:
        # 1,000 tokens in flight at most; timeout 0.2 s: backfilling stops once the head waited 0.1 s
        tracker = Tracker(PromptBudget(limit=8, timeout_s=0.2, tokens=1_000))
        first = tracker.run("first", 2_400, 0.3)  # 800 tokens, held 0.3 s
        head = tracker.run("head", 2_400, 0.01, delay_s=0.005)  # cannot fit beside the first
        early = [tracker.run(f"early{i}", 300, 0.02, delay_s=0.01 + i * 0.001) for i in range(2)]  # 100 each
        late = [tracker.run(f"late{i}", 300, 0.01, delay_s=0.15 + i * 0.001) for i in range(2)]
        await asyncio.gather(first, head, *early, *late)
        return tracker

    tracker = run(main())
    assert tracker.started.index("early0") < tracker.started.index("head")
    assert tracker.started.index("head") < tracker.started.index("late0")  # came after the head waited 0.1 s


def test_the_speed_and_the_characters_per_token_come_from_the_servers_timings() -> None:
    speed = PromptSpeed()
    assert speed.tokens_per_s is None and speed.chars_per_token == 3.0
    speed.observe(4_000, {"prompt_n": 1_000.0, "prompt_ms": 20_000.0})  # 50 tokens/s, 4 characters a token
    speed.observe(4_000, {"prompt_n": 500.0, "prompt_ms": 20_000.0, "cache_n": 500.0})  # shared: 25 tokens/s
    speed.observe(100, {"prompt_n": 10.0, "prompt_ms": 1.0})  # too short to say anything
    speed.observe(4_000, None)  # a server without timings
    assert speed.tokens_per_s == pytest.approx(50.0)
    assert speed.chars_per_token == pytest.approx(4.0)
    budget = PromptBudget(limit=4, timeout_s=600, speed=speed)
    assert budget.capacity == pytest.approx(50.0 * 600 * 0.5)
    assert budget.estimate(8_000) == pytest.approx(2_000)
    assert budget.describe()["tokens_in_flight_limit"] == 15_000
    assert PromptBudget(limit=4, timeout_s=600, tokens="off").capacity is None


def test_images_weigh_their_tokens_and_leave_the_text_ratio_alone() -> None:
    speed = PromptSpeed()
    # 4,000 characters of text beside a 1,000-token page image: 2,000 tokens read, 1,000 of them text
    speed.observe(4_000, {"prompt_n": 2_000.0, "prompt_ms": 20_000.0}, image_tokens=1_000)
    assert speed.chars_per_token == pytest.approx(4.0)  # not 2.0: the image's tokens are not text
    assert speed.tokens_per_s == pytest.approx(100.0)  # the server read image and text alike
    speed.observe(10_000, {"prompt_n": 1_000.0, "prompt_ms": 1_000.0}, image_tokens=990)  # 10 text tokens: no ratio
    assert speed.chars_per_token == pytest.approx(4.0)
    budget = PromptBudget(limit=4, timeout_s=600, speed=speed)
    assert budget.estimate(8_000, image_tokens=1_500) == pytest.approx(2_000 + 1_500)
    assert budget.estimate(8_000) == pytest.approx(2_000)


def test_a_cancelled_request_gives_its_room_back_whether_it_waited_or_ran() -> None:
    async def main() -> tuple[PromptBudget, list[str]]:
        budget = PromptBudget(limit=1, timeout_s=10, tokens="off")
        order: list[str] = []

        async def hold(name: str, seconds: float) -> None:
            async with budget.admit(10):
                order.append(name)
                await asyncio.sleep(seconds)

        running = asyncio.create_task(hold("running", 10))
        await asyncio.sleep(0.01)
        waiting = asyncio.create_task(hold("waiting", 0))
        await asyncio.sleep(0.01)
        waiting.cancel()
        running.cancel()
        await asyncio.gather(running, waiting, return_exceptions=True)
        await asyncio.wait_for(hold("after", 0), timeout=1)  # would hang if either kept its room
        return budget, order

    budget, order = run(main())
    assert order == ["running", "after"] and budget._count == 0 and budget._tokens == 0


def test_prompt_characters_count_text_parts() -> None:
    messages = [
        {"role": "system", "content": "abc"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "de"}, {"type": "image_url", "image_url": {"url": "data:..."}}],
        },
    ]
    assert prompt_chars(messages) == 5


def test_random_arrivals_all_finish_and_respect_the_count() -> None:
    rng = random.Random(7)

    async def main() -> Tracker:
        tracker = Tracker(PromptBudget(limit=3, timeout_s=0.5, tokens=5_000))
        await asyncio.gather(
            *(
                tracker.run(f"r{i}", rng.randrange(1, 30_000), rng.random() / 100, delay_s=rng.random() / 50)
                for i in range(60)
            )
        )
        return tracker

    tracker = run(main())
    assert len(tracker.started) == 60 and max(c for c, _, _ in tracker.peaks) <= 3


def test_a_request_cancelled_while_it_waits_is_dropped_by_the_release_that_would_admit_it() -> None:
    # Ctrl-C cancels a waiting request's future at once and runs its handler a step later; a release in between
    # must not try to admit it (setting a cancelled future's result raised in the releasing request, whose own
    # answer was then journaled as a client error)
    async def go() -> bool:
        budget = PromptBudget(limit=1, timeout_s=10, tokens="off")
        first = budget.admit(100)
        await first.__aenter__()

        async def second() -> None:
            async with budget.admit(100):
                pass

        task = asyncio.create_task(second())
        await asyncio.sleep(0)  # queued behind the first
        task.cancel()
        await first.__aexit__(None, None, None)  # the release admits whoever waits: no one, now
        with pytest.raises(asyncio.CancelledError):
            await task

        async def third() -> None:
            async with budget.admit(100):
                pass

        await asyncio.wait_for(third(), timeout=5)  # the cancelled one holds no room: the next goes at once
        return True

    assert asyncio.run(go())


def _known(tokens_per_s: float, chars_per_token: float = 4.0) -> PromptSpeed:
    """A speed as one llama-server answer reports it."""
    speed = PromptSpeed()
    read = 1_000.0
    speed.observe(int(read * chars_per_token), {"prompt_n": read, "prompt_ms": 1000.0 * read / tokens_per_s})
    return speed


def test_an_attempt_gets_twice_its_prompts_reading_time_where_the_timeout_is_shorter() -> None:
    budget = PromptBudget(limit=4, timeout_s=600, speed=_known(15.0))
    assert budget.attempt_timeout(4_000) == 600  # 1,000 tokens: 67 s to read, well inside the timeout
    assert budget.attempt_timeout(4 * 4_400) == 600  # 293 s to read: under half the timeout, still enough
    assert budget.attempt_timeout(4 * 12_000) == pytest.approx(2 * 12_000 / 15.0)  # 800 s to read: 1,600 s
    assert budget.attempt_timeout(4 * 100_000) == 6 * 600  # at most six timeouts
    assert budget.stats.stretched == 2 and budget.stats.longest_attempt_s == 3_600
    described = budget.describe()
    assert (described["stretched_attempts"], described["longest_attempt_timeout_s"]) == (2, 3_600)


@pytest.mark.parametrize("setting", ["off", 50_000])
def test_a_fixed_or_no_budget_keeps_the_timeout_strict(setting) -> None:
    budget = PromptBudget(limit=4, timeout_s=600, tokens=setting, speed=_known(15.0))
    assert budget.attempt_timeout(4 * 12_000) == 600 and budget.stats.stretched == 0
    assert budget.describe()["longest_attempt_timeout_s"] is None


def test_before_the_speed_is_known_an_attempt_gets_the_timeout() -> None:
    budget = PromptBudget(limit=4, timeout_s=600)
    assert budget.attempt_timeout(4 * 100_000) == 600 and budget.stats.stretched == 0


@given(st.floats(1.0, 5_000.0), st.integers(0, 2_000_000), st.floats(1.0, 3_600.0))
def test_an_attempts_time_is_never_below_the_timeout_nor_above_six_and_covers_the_reading(
    tokens_per_s: float, chars: int, timeout_s: float
) -> None:
    budget = PromptBudget(limit=4, timeout_s=timeout_s, speed=_known(tokens_per_s))
    given_s = budget.attempt_timeout(chars)
    reading = budget.estimate(chars) / tokens_per_s
    assert timeout_s <= given_s <= 6 * timeout_s
    assert given_s >= min(2 * reading, 6 * timeout_s) * (1 - 1e-12)


def test_before_the_speed_is_known_the_shortest_prompt_goes_first_and_long_ones_wait_for_its_answer() -> None:
    """Four contracts queued at once, the longest first (as a dataset may list them): the shortest is read first,
    and no other long prompt starts beside it; its answer gives the speed, and the rest go by the budget."""
    sizes = {"c12k": 36_000, "c11k": 33_000, "c5k": 15_000, "c9k": 27_000}  # characters, 3 a token

    async def main() -> tuple[PromptBudget, list[tuple[str, int]]]:
        budget = PromptBudget(limit=4, timeout_s=10)
        started: list[tuple[str, int]] = []  # (name, requests in flight when it started)
        in_flight = 0

        async def ask(name: str, chars: int, delay_s: float) -> None:
            nonlocal in_flight
            await asyncio.sleep(delay_s)
            async with budget.admit(chars):
                in_flight += 1
                started.append((name, in_flight))
                await asyncio.sleep(0.02)
                in_flight -= 1
            # the server read it at 10,000 tokens/s: the budget holds 50,000 tokens (half a 10 s timeout)
            budget.speed.observe(chars, {"prompt_n": chars / 3, "prompt_ms": chars / 3 / 10})

        await asyncio.gather(*(ask(name, chars, 0.0) for name, chars in sizes.items()))
        return budget, started

    budget, started = run(main())
    names = [name for name, _ in started]
    assert names[0] == "c5k" and started[0][1] == 1
    assert started[1][1] == 1  # the next waited for the first answer, not only for a free slot
    assert sorted(names) == sorted(sizes)
    assert budget.stats.passed >= 1  # the short one went ahead of longer ones that came before it
