"""Reading the person's task: submit once allowed, or fill and leave it for their review."""

import pytest

from appliance.computer_agent.task import read_task


@pytest.mark.parametrize(
    "task",
    [
        "fill it but don't submit, I want to check first",
        "Fill in the library card application for me, but don't submit it; I want to check it first.",
        "Please fill it in without submitting.",
        "Do not send it yet.",
        "dont press submit",
        "fill it in but do not press send",
        "I'll submit it myself.",
        "Let me review it before it goes.",
        "Fill it in. I want to look at it first.",
        "Fill everything, I will check it before I submit.",
        "leave it for me to send",
        "fill it and save it as a draft",
        "Fill it in, don’t submit.",
    ],
)
def test_review_tasks(task):
    intent = read_task(task)
    assert not intent.submit and intent.why


@pytest.mark.parametrize(
    "task",
    [
        "",
        "Fill in the web form at http://x/y for the person and submit it once they allow it.",
        "Fill in and submit the form at http://127.0.0.1:8/flight for David Miller.",
        "Book the flight for me.",
        "Please fill it in and send it.",
        "Don't forget to submit it.",
        "I'd like to submit this form.",
        "I want to submit my application",
        "I'm not sure about the date, but submit it when done.",
    ],
)
def test_submit_tasks(task):
    assert read_task(task).submit and read_task(task).why == ""
