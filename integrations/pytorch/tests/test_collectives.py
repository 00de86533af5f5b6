"""Every collective FSDP2, DeviceMesh and DDP call, on the inagg backend, against gloo's answers, one test per
collective, dtype (and op). One launch of 4 ranks runs every case (``_ranks.scenario_tensor_collectives``), each
rank reporting each case's outcome into its report file; each parametrized test asserts on its case's outcome."""

from __future__ import annotations

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import inagg_torch
from inagg_torch.process_group import InaggWork, ProcessGroupInagg
from conftest import assert_ok, assert_reported, run_ranks
import _ranks

WORLD = 4
DTYPES = _ranks.COLLECTIVE_DTYPES
BYTES_DTYPES = DTYPES + (torch.float64, torch.int64, torch.bool)


@pytest.fixture(scope="module")
def cases(agent):
    return run_ranks("tensor_collectives", WORLD, env={"INAGG_AGENT": str(agent.socket)})


def assert_case(results, name: str) -> None:
    assert_reported(results, name, "case")


@pytest.mark.parametrize("op", _ranks.COLLECTIVE_OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_all_reduce_matches_gloo(cases, dtype, op):
    """From empty to several rounds; SUM and AVG on the agent (also against the exact sum), MIN and MAX on the agent
    too (one host), bit for bit gloo's."""
    assert_case(cases, f"all_reduce-{dtype}-{op}")


def test_all_reduce_of_a_non_contiguous_tensor(cases):
    assert_case(cases, "all_reduce-non_contiguous")


@pytest.mark.parametrize("dtype", BYTES_DTYPES, ids=str)
def test_all_gather_moves_the_bytes_exactly(cases, dtype):
    assert_case(cases, f"all_gather-{dtype}")


@pytest.mark.parametrize("dtype", BYTES_DTYPES, ids=str)
def test_broadcast_moves_the_bytes_exactly(cases, dtype):
    assert_case(cases, f"broadcast-{dtype}")


@pytest.mark.parametrize("op", _ranks.COLLECTIVE_OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reduce_scatter_matches_gloo(cases, dtype, op):
    assert_case(cases, f"reduce_scatter-{dtype}-{op}")


def test_coalesced_forms_and_lists(cases):
    assert_case(cases, "coalesced")


def test_functional_collectives_from_cpp_run_on_the_agent(cases):
    assert_case(cases, "functional")


def test_wait_honours_its_timeout(cases):
    assert_case(cases, "wait_timeout")
    assert_ok(cases)


@pytest.fixture(scope="module")
def strict_run(agent):
    """Strict mode (nothing may fall back), and FSDP2 and HSDP training under it."""
    pytest.importorskip("torch.distributed.fsdp")
    return run_ranks("strict,fsdp,hsdp", WORLD, env={"INAGG_AGENT": str(agent.socket), "INAGG_STRICT": "1"},
                     timeout=240)


def assert_scenario(results, name: str) -> None:
    assert_reported(results, name, "scenario")


def test_strict_mode_refuses_fallbacks_by_name(strict_run):
    assert_scenario(strict_run, "strict")


def test_fsdp2_trains_like_gloo_without_falling_back(strict_run):
    assert_scenario(strict_run, "fsdp")


def test_hsdp_on_a_2d_mesh_trains_like_gloo(strict_run):
    assert_scenario(strict_run, "hsdp")
    assert_ok(strict_run)


# --- in one process -------------------------------------------------------------------------------------------------

#: What dist.ProcessGroup has that is not a collective (or is answered by torch itself, not the backend).
NOT_COLLECTIVES = {
    "BackendType", "_backend_id", "_end_coalescing", "_get_backend", "_get_backend_name",
    "_get_sequence_number_for_group", "_has_hooks", "_id", "_pybind11_conduit_v1_", "_register_backend",
    "_register_on_completion_hook", "_set_default_backend", "_set_group_desc", "_set_group_name",
    "_set_sequence_number_for_group", "_start_coalescing", "_wait_for_pending_works", "abort", "boxed",
    "get_group_store", "merge_remote_group", "name", "rank", "set_timeout", "shutdown", "size", "split_group",
    "unbox", "_enable_collectives_timing",
}


def test_every_collective_of_torch_is_overridden():
    """A collective torch adds and this class does not override would reach gloo through the registered backend,
    unlogged and past strict mode: this fails first."""
    collectives = {n for n in dir(dist.ProcessGroup) if not n.startswith("__") and callable(getattr(
        dist.ProcessGroup, n)) and n not in NOT_COLLECTIVES}
    missing = sorted(n for n in collectives if n not in ProcessGroupInagg.__dict__)
    assert not missing, f"collectives of torch {torch.__version__} not overridden: {missing}"


def test_wait_with_a_timeout_raises_past_it_and_returns_when_done():
    future = torch.futures.Future()
    work = InaggWork(future, None, "all_gather_single")
    with pytest.raises(inagg_torch.WaitTimeoutError, match="all_gather_single did not finish within .* 0.05 s"):
        work.wait(timedelta(seconds=0.05))
    future.set_result([torch.ones(1)])
    assert work.wait(timedelta(seconds=0.05))
    assert InaggWork(future, None).wait(timedelta(0))  # 0: no limit (torch's default)


@pytest.fixture()
def single(agent_env):
    pg = ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=20))
    yield pg
    pg.shutdown()


def _untouched(*tensors):
    return [t.clone() for t in tensors]


@pytest.mark.parametrize("call,message", [
    (lambda pg, o, i: pg.all_gather_single(o[:5], i, None),
     r"all_gather_single on rank 0: output has 5 elements \(5,\), input 6 \(6,\)"),
    (lambda pg, o, i: pg._allgather_base(o.double(), i, None), r"output is torch.float64, input torch.float32"),
    (lambda pg, o, i: pg.allgather_into_tensor_coalesced([o, o], [i], None), r"2 outputs for 1 inputs"),
    (lambda pg, o, i: pg.reduce_scatter_single(o, i[:4], None),
     r"reduce_scatter_single on rank 0: input has 4 elements \(4,\), output 6 \(6,\) x world size 1 = 6"),
    (lambda pg, o, i: pg.reduce_scatter_tensor_coalesced([o], [i.int()], None), r"output is torch.float32, input "
                                                                                r"torch.int32"),
    (lambda pg, o, i: pg.broadcast([o], _bcast(1)), r"broadcast on rank 0: root rank 1 is not in 0..0"),
    (lambda pg, o, i: pg.allgather([[o, o]], [i], None), r"allgather on rank 0: 2 output tensors for world size 1"),
])
def test_bad_input_raises_naming_collective_rank_and_sizes_before_sending(single, call, message):
    out, inp = torch.full((6,), 3.0), torch.arange(6.0)
    before = _untouched(out, inp)
    with pytest.raises(inagg_torch.BadInputError, match=message):
        call(single, out, inp)
    assert torch.equal(out, before[0]) and torch.equal(inp, before[1])
    t = torch.arange(6.0)
    single.allreduce([t]).wait()  # nothing half-sent: the next collective pairs up
    assert torch.equal(t, torch.arange(6.0))


def _bcast(root: int):
    o = dist.distributed_c10d.BroadcastOptions()
    o.rootRank = root
    return o
