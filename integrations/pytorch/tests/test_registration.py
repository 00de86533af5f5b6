"""Registration and single-process behaviour (world size 1, in this process)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import inagg_torch
from inagg_torch.process_group import _rounds


def test_import_registers_the_inagg_backend_for_cpu():
    assert "inagg" in dist.Backend.backend_list
    assert dist.Backend._plugins["INAGG"].creator_fn is inagg_torch.create
    inagg_torch.register()  # idempotent


def test_one_rank_group_all_reduces_through_the_agent_and_names_itself(agent_env):
    pg = inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=30))
    try:
        assert pg.getBackendName() == "inagg"
        assert (pg.local_rank, pg.local_world_size, pg.hosts) == (0, 1, 1)
        t = torch.arange(100_000, dtype=torch.float32)
        w = pg.allreduce([t], None)
        w.wait()
        assert torch.equal(t, torch.arange(100_000, dtype=torch.float32))
        opts = dist.AllreduceOptions()
        opts.reduceOp = dist.ReduceOp.AVG
        i = torch.arange(10, dtype=torch.int32) * 3
        pg.allreduce([i], opts).wait()
        assert torch.equal(i, torch.arange(10, dtype=torch.int32) * 3)
    finally:
        pg.shutdown()


def test_rounds_split_tensors_at_the_slot_size_in_order():
    a, b = torch.zeros(5), torch.zeros(7)
    rounds = list(_rounds([a, b], 4))
    assert [[(t is a, s, n) for t, s, n in r] for r in rounds] == [
        [(True, 0, 4)], [(True, 4, 1), (False, 0, 3)], [(False, 3, 4)]]
    assert len(list(_rounds([torch.zeros(0)], 4))) == 1  # an empty all-reduce still takes one (empty) round


def test_unsupported_op_is_named_and_cuda_absence_is_said_once(agent_env, caplog):
    import logging

    from inagg_torch import _fallback

    _fallback._said.discard("cuda")
    caplog.set_level(logging.WARNING, logger="inagg_torch")
    groups = [inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=30)) for _ in range(2)]
    try:
        if not torch.cuda.is_available():
            assert sum("CUDA is not available" in r.getMessage() for r in caplog.records) == 1
        opts = dist.AllreduceOptions()
        opts.reduceOp = dist._make_nccl_premul_sum(2.0)
        with pytest.raises(inagg_torch.UnsupportedError, match="PREMUL_SUM"):
            groups[0].allreduce([torch.ones(3)], opts)
    finally:
        for g in groups:
            g.shutdown()
