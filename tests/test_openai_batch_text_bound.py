"""POST /v1/audio/speech/batch bounds its items' texts together (4 x --max-text-chars characters), refused
whole before any item runs, and counts its items first: too many items is said before too much text."""

from __future__ import annotations


async def test_a_batch_of_more_text_together_than_four_sections_hold_is_refused_whole(worker):
    client = await worker(max_text_chars=10)
    items = [{"input": "가나다라마바사아자"} for _ in range(5)]  # 9 characters each, 45 together
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 400
        error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("TextTooLong", "items")
    assert error["message"] == "the items have 45 characters together, the limit is 40"
    async with client.post("/v1/audio/speech/batch", json={"items": items[:4]}) as response:
        assert response.status == 200  # 36 characters: within the bound
        assert (await response.json())["succeeded"] == 4


async def test_too_many_items_is_said_before_too_much_text(worker):
    client = await worker(max_text_chars=10, max_queue=2)
    items = [{"input": "가나다라마바사아자"} for _ in range(5)]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 400
        error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("TooManySections", "items")
    assert error["message"].startswith("5 items, the limit is 2 (--max-queue"), error
