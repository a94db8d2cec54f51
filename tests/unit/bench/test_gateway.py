"""`evolve bench gateway` drives the real gateway: the worst requests are answered (refused, mostly) and
the job's byte ledger stays within its budget. Its memory figure is printed by the command, not asserted."""

from __future__ import annotations

from evolve.bench.gateway import bench_gateway, worst_requests
from evolve.llm.budget import GatewayLimits


def test_every_worst_request_fits_the_body_cap():
    assert all(len(body) <= 4 * 1024 * 1024 for body in worst_requests(4 * 1024 * 1024, 200_000))


def test_the_bench_serves_one_job_within_its_byte_budget():
    result = bench_gateway(20_000, GatewayLimits(), clients_n=2, rounds=1)
    assert result.requests == 2 * len(worst_requests(1024, 1))
    assert 400 in result.statuses and 403 in result.statuses  # bad ones refused, then the budget is spent
    assert 0 < result.bytes_used <= result.byte_budget == 20_000 * 64
    assert 0 < result.log_bytes <= result.bytes_used and result.peak_rss_mib >= result.baseline_rss_mib
