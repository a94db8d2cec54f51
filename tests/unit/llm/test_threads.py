from evolve.llm.threads import MAX_THREADS, thread_plan


def test_a_two_core_machine_gives_the_model_one_thread_even_when_the_run_leaves_both_free():
    # two threads on two cores fell from 112 to 3.8 tokens/s with one busy competitor
    assert thread_plan(2, beside=0).threads == 1
    assert thread_plan(2, beside=2).threads == 1


def test_the_model_takes_the_cores_the_sandboxes_leave_up_to_half_the_machine():
    assert thread_plan(16, beside=4).threads == 8
    assert thread_plan(16, beside=12).threads == 4
    assert thread_plan(16, beside=16).threads == 1
    assert thread_plan(128, beside=0).threads == MAX_THREADS


def test_configured_threads_win_and_batch_threads_follow_them():
    plan = thread_plan(16, beside=4, threads=3)
    assert (plan.threads, plan.threads_batch) == (3, 3)
    assert "configured: threads 3" in plan.reason
    assert thread_plan(2, threads_batch=2).threads_batch == 2
