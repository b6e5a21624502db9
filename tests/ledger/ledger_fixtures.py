"""Fixture records for the ledger tests: clean numbers, so the arithmetic can be done by hand.

`fixture_records()` is the one source of truth; tests either build a KnowledgeBase from
it directly or write it to a records/ tree and run `kb ledger` on it.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from kb.model import KIND_BY_FOLDER, KnowledgeBase, Record

HISTORY = [{"version": 1, "date": "2026-11-30", "change": "Test fixture."}]
SRC = "sources/fixture-source"


def figure(kb: KnowledgeBase, pointer: str) -> Fraction:
    """The exact value of a record's figure named by `pointer` ("record-id#field")."""
    record_id, _, field = pointer.partition("#")
    record = kb.get(record_id)
    assert record is not None, record_id
    return Fraction(str(record.get(f"{field}.value")))


def q(value: Any, unit: str, basis: str = "estimated", **extra: Any) -> dict[str, Any]:
    out = {"value": value, "unit": unit, "basis": basis, **extra}
    if basis != "unverified":
        out.setdefault("source", SRC)
    return out


def common(record_id: str, kind: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "id": record_id,
        "title": record_id,
        "version": 1,
        "status": "draft",
        "history": copy.deepcopy(HISTORY),
    }


def link(record_id: str, gbps: Any, latency_us: Any | None) -> dict[str, Any]:
    rec = common(record_id, "interconnect") | {
        "family": "Fixture",
        "scope": "link",
        "topology": "point-to-point",
        "bandwidth": {"per_link": q(gbps, "GB/s", "vendor-spec", direction="per-direction")},
    }
    if latency_us is not None:
        rec["latency"] = q(latency_us, "us")
    return rec


def host(name: str, count: int, capacity_gb: int, reserve_gb: int) -> dict[str, Any]:
    return {
        "name": name,
        "count": count,
        "capacity": q(capacity_gb, "GB", "unverified"),
        "reserve": q(reserve_gb, "GB", "unverified"),
    }


def two_host_placement(record_id: str, state_gb: int) -> dict[str, Any]:
    """One 200 GB host (reserve 20) against two 100 GB hosts (reserve 20 each)."""
    return common(record_id, "placement") | {
        "envelope": {
            "model": "models/fixture-model",
            "precision": "bf16",
            "quality": "same weights",
            "batch": 1,
            "state_bytes": q(state_gb, "GB"),
            "useful_work": q(state_gb, "GB"),
            "slo": q(500, "ms", "unverified"),
        },
        "reference": {
            "name": "one-large-host",
            "devices": [host("big", 1, 200, 20)],
            "state_shards": 1,
            "useful": {"rate": q(500, "GB/s"), "parallel": 1},
            "cost_rate": q(10, "USD/h", "unverified"),
        },
        "candidates": [
            {
                "name": "two-hosts",
                "devices": [host("small", 2, 100, 20)],
                "state_shards": 2,
                "useful": {"rate": q(500, "GB/s"), "parallel": 2},
                "strategies": ["strategies/tensor-parallel"],
                "cost_rate": q(12, "USD/h", "unverified"),
                "transfers": [
                    {
                        "name": "tp-all-reduce",
                        "pattern": "all-reduce",
                        "link": "interconnects/fixture-link",
                        "ranks": 2,
                        "count": 160,
                        "message_size": q(8, "kB"),
                        "scales_with_batch": True,
                        "overlap": q(0.5, "ms"),
                    }
                ],
                "overheads": {
                    "sync": {"time": q(0.2, "ms")},
                    "orchestration_or_recovery": {"time": q(0.1, "ms")},
                },
            }
        ],
    }


def tp_placement() -> dict[str, Any]:
    """4-way tensor parallel over a measured fast link against a slow estimated link."""

    def side(name: str, link_id: str, latency: dict[str, Any] | None) -> dict[str, Any]:
        transfer = {
            "name": "tp-all-reduce",
            "pattern": "all-reduce",
            "link": link_id,
            "ranks": 4,
            "count": 160,
            "message_size": q(16, "kB"),
            "scales_with_batch": True,
        }
        if latency:
            transfer["link_latency"] = latency
        return {
            "name": name,
            "devices": [host("gpu", 4, 80, 0)],
            "state_shards": 4,
            "useful": {"rate": q(2000, "GB/s"), "parallel": 4},
            "transfers": [transfer],
        }

    return common("placements/fixture-tp", "placement") | {
        "envelope": {
            "model": "models/fixture-model",
            "precision": "bf16",
            "quality": "same",
            "batch": 8,
            "state_bytes": q(140, "GB"),
            "useful_work": q(140, "GB"),
        },
        "reference": side(
            "switched",
            "interconnects/fixture-fast",
            q(1, "us", "measured", note="from the receipt's small-message rows"),
        ),
        "candidates": [side("point-to-point", "interconnects/fixture-link", None)],
    }


def fixture_records() -> dict[str, dict[str, Any]]:
    receipt = common("receipts/fixture-ar", "receipt") | {
        "source": SRC,
        "evidence_class": "benchmark",
        "pattern": "all-reduce",
        "engine": {"name": "nccl-tests", "version": "2.18.5"},
        "provenance": {
            k: "not reported"
            for k in (
                "hardware_firmware",
                "topology_direction",
                "message_sizes",
                "model_precision",
                "batch_concurrency",
                "warmup",
                "repetitions",
                "quality_check",
                "failures_retries",
                "raw_artifact",
            )
        },
        "interconnect": "interconnects/fixture-fast",
        "results": [
            {
                "label": "128 kB",
                "gpus": 4,
                "message_size": q(128, "kB", "measured"),
                "bus_bandwidth": q(80, "GB/s", "measured"),
            }
        ],
    }
    records = [
        common(SRC, "source")
        | {
            "publisher": "kb tests",
            "url": "https://example.invalid/",
            "accessed": "2026-11-30",
            "source_type": "seed",
            "tier": "T4",
        },
        link("interconnects/fixture-link", 10, 5),
        link("interconnects/fixture-fast", 100, 1),
        link("interconnects/fixture-slow", 1, 5),
        receipt,
        two_host_placement("placements/fixture-both-fit", 100),
        two_host_placement("placements/fixture-one-fits", 170),
        tp_placement(),
    ]
    return {r["id"]: r for r in records}


def make_kb(records: dict[str, dict[str, Any]]) -> KnowledgeBase:
    """A knowledge base of `records` after the schema stage (the ledger reads typed views)."""
    from kb.checker import schema_stage

    kb = KnowledgeBase(root="records")
    for record_id, data in records.items():
        kind = KIND_BY_FOLDER[record_id.split("/")[0]]
        kb.add(Record(record_id, kind, f"records/{record_id}.yaml", copy.deepcopy(data)))
    schema_stage(kb)
    return kb


def write_tree(root: Path, records: dict[str, dict[str, Any]]) -> Path:
    for record_id, data in records.items():
        path = root / "records" / f"{record_id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return root
