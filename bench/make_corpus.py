"""Write a deterministic synthetic knowledge base of N valid records for benchmarks.

    python bench/make_corpus.py --n 10000 --out /tmp/kb-10k   # then: cd /tmp/kb-10k && kb validate

Every kind appears in realistic proportions (receipts and sources dominate, as
in a growing evidence base); records are ~2.4 KB on average. Flop classes carry
symbols, equations, a derivation and claims bound to hardware, interconnect and
model records; a quarter of them bind `hardware/bench-gpu-0000` (the "hot"
record the runner changes to measure an incremental re-check). The same N gives
byte-identical output: every record is drawn from its own seeded generator.
All figures are synthetic (basis `estimated`, sourced to synthetic sources) and
exist only to exercise the validator.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

HOT_HARDWARE = "hardware/bench-gpu-0000"
DATE = "2026-11-30"
# Share of N per kind (the rest of the rounding goes to receipts).
PROPORTIONS = {
    "sources": 0.18,
    "interconnects": 0.03,
    "hardware": 0.05,
    "models": 0.05,
    "flops": 0.20,
    "strategies": 0.02,
    "placements": 0.04,
    "proposals": 0.02,
}
KIND_OF = {
    "sources": "source",
    "interconnects": "interconnect",
    "hardware": "accelerator",
    "models": "model",
    "flops": "flop_class",
    "strategies": "strategy",
    "placements": "placement",
    "proposals": "proposal",
    "receipts": "receipt",
}
NAME_OF = {
    "sources": "bench-src",
    "interconnects": "bench-link",
    "hardware": "bench-gpu",
    "models": "bench-model",
    "flops": "bench-flop",
    "strategies": "bench-strategy",
    "placements": "bench-placement",
    "proposals": "bench-proposal",
    "receipts": "bench-receipt",
}
WORDS = (
    "bandwidth latency all-reduce shard replica tensor pipeline expert batch prefill decode "
    "weights activations cache host device fabric switch link ring tree collective payload "
    "crossover throughput memory capacity overlap compute kernel epilogue fused stream copy "
    "topology rank layer hidden width sequence context token step schedule placement boundary"
).split()
PATTERNS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "point-to-point")
ENGINES = ("nccl-tests", "rccl-tests", "nvbandwidth", "stream", "vllm-benchmark")


# --- small helpers -------------------------------------------------------------------------


def counts(n: int) -> dict[str, int]:
    """Count records per folder for a corpus of `n` (at least one of every kind)."""
    sizes = {folder: max(1, int(n * share)) for folder, share in PROPORTIONS.items()}
    sizes["receipts"] = max(1, n - sum(sizes.values()))
    return sizes


def rid(folder: str, index: int) -> str:
    return f"{folder}/{NAME_OF[folder]}-{index:04d}"


def rng_for(folder: str, index: int) -> random.Random:
    return random.Random(f"{folder}:{index}")


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def prose(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng, rng.randint(8, 16)) for _ in range(sentences))


def pick(rng: random.Random, folder: str, sizes: dict[str, int]) -> str:
    return rid(folder, rng.randrange(sizes[folder]))


def qty(value: Any, unit: str, source: str, **extra: Any) -> dict[str, Any]:
    return {"value": value, "unit": unit, "basis": "estimated", "source": source, **extra}


def common(record_id: str, folder: str, rng: random.Random, title: str) -> dict[str, Any]:
    return {
        "kind": KIND_OF[folder],
        "id": record_id,
        "title": title,
        "version": 1,
        "status": "draft",
        "summary": sentence(rng, 18),
        "tags": sorted({rng.choice(WORDS) for _ in range(3)}),
        "history": [{"version": 1, "date": DATE, "change": "Synthetic benchmark record."}],
    }


# --- figures shared between a record and the claims bound to it -----------------------------


def hardware_bandwidth_gbs(index: int) -> int:
    """HBM bandwidth of bench-gpu-<index> in GB/s (deterministic, no RNG)."""
    return 1600 + (index * 137) % 6400


def link_bandwidth_gbs(index: int) -> int:
    """Per-link, per-direction bandwidth of bench-link-<index> in GB/s."""
    return 25 + (index * 29) % 400


def model_geometry(index: int) -> dict[str, int]:
    d_model = 1024 * (2 + index % 14)
    return {
        "d_model": d_model,
        "d_ff": d_model * 8 // 3 // 256 * 256 + 256,
        "layers": 16 + index % 64,
        "heads": d_model // 128,
        "kv_heads": 8,
        "vocab": 32000 + 256 * (index % 500),
    }


def params_per_layer(geometry: dict[str, int]) -> int:
    d, kv = geometry["d_model"], geometry["kv_heads"] * 128
    return 2 * d * d + 2 * d * kv + 3 * d * geometry["d_ff"]


# --- one generator per kind ---------------------------------------------------------------


def make_source(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("sources", index)
    record = common(rid("sources", index), "sources", rng, f"Synthetic source {index}")
    record.update(
        {
            "publisher": rng.choice(["NVIDIA", "AMD", "Google", "MLCommons", "Azure", "A lab"]),
            "source_type": rng.choice(["datasheet", "documentation", "paper", "benchmark", "blog"]),
            "tier": rng.choice(["T1", "T2", "T3"]),
            "url": f"https://example.invalid/bench/{index}",
            "accessed": DATE,
            "authors": [f"Author {rng.randint(1, 500)}" for _ in range(rng.randint(1, 4))],
            "locator": f"Table {rng.randint(1, 9)}",
            "notes": prose(rng, 4),
        }
    )
    return record


def make_interconnect(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("interconnects", index)
    src = pick(rng, "sources", sizes)
    per_link, links = link_bandwidth_gbs(index), rng.choice([1, 4, 8, 18])
    record = common(rid("interconnects", index), "interconnects", rng, f"Synthetic link {index}")
    record.update(
        {
            "family": rng.choice(["NVLink", "PCIe", "InfiniBand", "Ethernet", "ICI"]),
            "generation": str(rng.randint(2, 6)),
            "scope": "link",
            "topology": rng.choice(["point-to-point", "switched", "torus"]),
            "links_per_device": links,
            "bandwidth": {
                "per_link": qty(
                    per_link, "GB/s", src, direction="per-direction", note=sentence(rng, 12)
                ),
                "per_device": qty(per_link * links, "GB/s", src, direction="per-direction"),
                "bidirectional_quoted": qty(
                    2 * per_link * links, "GB/s", src, direction="bidirectional"
                ),
            },
            "latency": qty(rng.choice([1, 2, 5]), "us", src),
            "notes": prose(rng, 3),
        }
    )
    return record


def make_hardware(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("hardware", index)
    src = pick(rng, "sources", sizes)
    link = rid("interconnects", index % sizes["interconnects"])
    per_link, count = link_bandwidth_gbs(index % sizes["interconnects"]), rng.choice([4, 8, 18])
    record = common(rid("hardware", index), "hardware", rng, f"Synthetic accelerator {index}")
    bf16 = rng.randint(200, 2500)
    record.update(
        {
            "vendor": rng.choice(["NVIDIA", "AMD", "Google", "Intel"]),
            "architecture": rng.choice(["Hopper", "Blackwell", "CDNA3", "Trillium"]),
            "form_factor": rng.choice(["SXM5", "OAM", "PCIe"]),
            "memory": {
                "type": "HBM3",
                "capacity": qty(rng.choice([80, 96, 141, 192, 288]), "GB", src, tier="T2"),
                "bandwidth": qty(
                    hardware_bandwidth_gbs(index), "GB/s", src, tier="T2", note=sentence(rng, 14)
                ),
            },
            "compute": {
                "bf16": qty(bf16, "TFLOP/s", src, sparsity="dense"),
                "fp16": qty(bf16, "TFLOP/s", src, sparsity="dense"),
                "fp8": qty(2 * bf16, "TFLOP/s", src, sparsity="dense"),
            },
            "links": [
                {
                    "interconnect": link,
                    "count": count,
                    "per_link": qty(per_link, "GB/s", src, direction="per-direction"),
                    "per_device": qty(per_link * count, "GB/s", src, direction="per-direction"),
                }
            ],
            "host_link": {"interconnect": pick(rng, "interconnects", sizes)},
            "power": qty(rng.choice([350, 700, 1000]), "W", src, note=sentence(rng, 10)),
            "notes": prose(rng, 4),
        }
    )
    return record


def make_model(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("models", index)
    src = pick(rng, "sources", sizes)
    geometry = model_geometry(index)
    per_layer = params_per_layer(geometry)
    total = geometry["layers"] * per_layer + 2 * geometry["vocab"] * geometry["d_model"]
    record = common(rid("models", index), "models", rng, f"Synthetic model {index}")
    record.update(
        {
            "family": "Bench",
            "architecture": "dense",
            "geometry": {
                "basis": "estimated",
                "source": src,
                **geometry,
                "mlp": "gated",
                "tied_embeddings": False,
            },
            "derived": {
                "params_per_layer": {
                    "value": per_layer,
                    "unit": "1",
                    "basis": "derived",
                    "source": src,
                    "note": sentence(rng, 16),
                },
                "params_total": {"value": total, "unit": "1", "basis": "derived", "source": src},
            },
            "notes": prose(rng, 4),
        }
    )
    return record


def make_receipt(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("receipts", index)
    src = pick(rng, "sources", sizes)
    hardware = HOT_HARDWARE if rng.random() < 0.1 else pick(rng, "hardware", sizes)
    record = common(rid("receipts", index), "receipts", rng, f"Synthetic receipt {index}")
    record.update(
        {
            "source": src,
            "evidence_class": rng.choice(["benchmark", "reference"]),
            "engine": {
                "name": rng.choice(ENGINES),
                "version": f"2.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            },
            "pattern": rng.choice(PATTERNS[:3]),
            "hardware": [hardware],
            "interconnect": pick(rng, "interconnects", sizes),
            "provenance": {
                key: sentence(rng, rng.randint(4, 9))
                for key in (
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
            "results": [
                _result_row(rng, src, size)
                for size in (8, 1024, 131072, 8388608)[: rng.randint(2, 4)]
            ],
            "notes": prose(rng, 4),
        }
    )
    return record


def _result_row(rng: random.Random, src: str, size_kib: int) -> dict[str, Any]:
    return {
        "label": f"{size_kib} KiB, in-place",
        "gpus": rng.choice([2, 4, 8]),
        "message_size": {"value": size_kib, "unit": "KiB", "basis": "measured", "source": src},
        "bus_bandwidth": {
            "value": round(rng.uniform(0.5, 480), 2),
            "unit": "GB/s",
            "basis": "measured",
            "source": src,
        },
        "algorithm_bandwidth": {
            "value": round(rng.uniform(0.5, 480), 2),
            "unit": "GB/s",
            "basis": "measured",
            "source": src,
        },
    }


def make_flop(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("flops", index)
    src = pick(rng, "sources", sizes)
    hw_index = 0 if rng.random() < 0.25 else rng.randrange(sizes["hardware"])
    link_index, model_index = rng.randrange(sizes["interconnects"]), rng.randrange(sizes["models"])
    record = common(rid("flops", index), "flops", rng, f"Synthetic crossover class {index}")
    record.update(
        {
            "arithmetic_intensity": qty(0, "FLOP/B", src, note=sentence(rng, 10)),
            "text": prose(rng, 8),
            "scales_with": [
                {"name": "batch_size", "symbol": "B", "text": sentence(rng, 14)},
                {"name": "hidden_width", "symbol": "d", "text": sentence(rng, 12)},
            ],
            "hardware_parameters": [
                {
                    "parameter": "memory_bandwidth",
                    "effect": sentence(rng, 12),
                    "basis": "estimated",
                    "source": src,
                    "values_for": [rid("hardware", hw_index)],
                }
            ],
            "affected_by_hardware": [rid("hardware", hw_index)],
            "workarounds": [{"id": f"workaround-{k}", "text": sentence(rng, 14)} for k in range(2)],
            "evidence": [
                {
                    "receipt": pick(rng, "receipts", sizes),
                    "verdict": "context",
                    "note": sentence(rng, 8),
                }
            ],
            **flop_equations(index, hw_index, link_index, model_index, src),
        }
    )
    return record


def flop_equations(index: int, hw: int, link: int, model: int, source: str) -> dict[str, Any]:
    """Symbols, equations, a derivation and claims of the tensor-parallel crossover shape."""
    factor = (4, 2)[index % 2]  # all-reduce vs reduce-scatter + all-gather payload
    half = factor // 2
    geometry = model_geometry(model)
    b_star = Fraction(
        params_per_layer(geometry) * link_bandwidth_gbs(link),
        half * geometry["d_model"] * hardware_bandwidth_gbs(hw),
    )
    model_id, hw_id, link_id = rid("models", model), rid("hardware", hw), rid("interconnects", link)
    return {
        "symbols": {
            "B": {"meaning": "batch size", "unit": "1"},
            "d": {"meaning": "hidden width", "unit": "1"},
            "P_layer": {"meaning": "parameters per layer", "unit": "1"},
            "BW_link": {"meaning": "per-rank link bandwidth, per direction", "unit": "GB/s"},
            "BW_hbm": {"meaning": "HBM bandwidth", "unit": "GB/s"},
        },
        "equations": {
            "balance": {
                "expr": f"{factor}*B*d/BW_link = 2*P_layer/BW_hbm",
                "text": "Transfer time per layer equals weight-read time per layer.",
            },
            "crossover": {
                "expr": f"B = P_layer*BW_link/({half}*d*BW_hbm)"
                if half > 1
                else "B = P_layer*BW_link/(d*BW_hbm)",
                "text": "The batch at which both costs are equal.",
            },
        },
        "derivations": [
            {
                "id": "crossover-batch",
                "text": "Solve the balance for the batch.",
                "steps": [
                    {"rule": "define", "result": "balance"},
                    {"rule": "solve_for", "from": "balance", "var": "B", "result": "crossover"},
                ],
            }
        ],
        "claims": [
            {
                "id": "crossover-on-bound-hardware",
                "kind": "numeric",
                "of": "crossover",
                "text": f"The crossover batch is about {round(float(b_star), 1)} on this hardware.",
                "bind": {
                    "P_layer": f"{model_id}#derived.params_per_layer",
                    "d": f"{model_id}#geometry.d_model",
                    "BW_link": f"{link_id}#bandwidth.per_link",
                    "BW_hbm": f"{hw_id}#memory.bandwidth",
                },
                "expect": {
                    "value": round(float(b_star), 1),
                    "unit": "1",
                    "rel_tol": 0.01,
                    "basis": "derived",
                    "source": source,
                },
            },
            {
                "id": "linear-in-link-bandwidth",
                "kind": "scaling",
                "of": "crossover",
                "text": "The crossover grows linearly with the link bandwidth.",
                "var": "BW_link",
                "law": "proportional",
            },
        ],
    }


def make_strategy(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("strategies", index)
    record = common(rid("strategies", index), "strategies", rng, f"Synthetic strategy {index}")
    record.update(
        {
            "mapping": rng.choice(["tensor", "pipeline", "expert", "data", "sequence-context"]),
            "split": sentence(rng, 10),
            "tax_entries": [
                {
                    "entry": "collective",
                    "row": "exposed",
                    "pattern": rng.choice(PATTERNS),
                    "text": sentence(rng, 12),
                },
                {"entry": "barrier", "row": "sync", "text": sentence(rng, 10)},
            ],
            "text": prose(rng, 4),
            "sources": [pick(rng, "sources", sizes)],
            "notes": prose(rng, 2),
        }
    )
    return record


def make_placement(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("placements", index)
    src = pick(rng, "sources", sizes)
    state = rng.choice([40, 80, 140])
    record = common(rid("placements", index), "placements", rng, f"Synthetic placement {index}")
    record.update(
        {
            "envelope": {
                "model": pick(rng, "models", sizes),
                "precision": "bf16",
                "quality": "same weights",
                "batch": rng.choice([1, 8, 32]),
                "state_bytes": qty(state, "GB", src),
                "useful_work": qty(state, "GB", src),
            },
            "reference": _option("one-device", 1, 200, src),
            "candidates": [
                _option(
                    "four-devices",
                    4,
                    80,
                    src,
                    pick(rng, "interconnects", sizes),
                    pick(rng, "strategies", sizes),
                )
            ],
            "sources": [src],
            "notes": prose(rng, 3),
        }
    )
    return record


def _option(
    name: str, count: int, capacity: int, src: str, link: str = "", strategy: str = ""
) -> dict[str, Any]:
    option: dict[str, Any] = {
        "name": name,
        "devices": [
            {
                "name": "gpu",
                "count": count,
                "capacity": qty(capacity, "GB", src),
                "reserve": qty(10, "GB", src),
            }
        ],
        "state_shards": count,
        "useful": {"rate": qty(2000, "GB/s", src), "parallel": count},
    }
    if link:
        option["strategies"] = [strategy]
        option["transfers"] = [
            {
                "name": "tp-all-reduce",
                "pattern": "all-reduce",
                "link": link,
                "ranks": count,
                "count": 160,
                "message_size": qty(16, "kB", src),
                "scales_with_batch": True,
            }
        ]
    return option


def make_proposal(index: int, sizes: dict[str, int]) -> dict[str, Any]:
    rng = rng_for("proposals", index)
    record = common(rid("proposals", index), "proposals", rng, f"Synthetic proposal {index}")
    record.update(
        {
            "text": prose(rng, 5),
            "crosses": ["device"],
            "placement": pick(rng, "placements", sizes),
            "candidate": "four-devices",
            "notes": prose(rng, 2),
        }
    )
    return record


MAKERS = {
    "sources": make_source,
    "interconnects": make_interconnect,
    "hardware": make_hardware,
    "models": make_model,
    "receipts": make_receipt,
    "flops": make_flop,
    "strategies": make_strategy,
    "placements": make_placement,
    "proposals": make_proposal,
}


# --- output --------------------------------------------------------------------------------


def render(record: dict[str, Any]) -> str:
    """YAML as authors write it: block structure, flat mappings (quantities) in flow style."""
    body = yaml.dump(
        record,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=None,
        width=110,
        allow_unicode=True,
    )
    return f"# yaml-language-server: $schema=../../schemas/{record['kind']}.schema.json\n{body}"


MARKER = ".bench-corpus"


def write_corpus(n: int, out: Path) -> dict[str, int]:
    """Write N records under out/records/ (replacing an earlier corpus); the count per folder."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise SystemExit(f"{out} exists and is not a bench corpus; refusing to replace it")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text(f"n={n}\n", encoding="utf-8")
    sizes = counts(n)
    for folder, count in sizes.items():
        target = out / "records" / folder
        target.mkdir(parents=True)
        for index in range(count):
            record = MAKERS[folder](index, sizes)
            path = target / f"{NAME_OF[folder]}-{index:04d}.yaml"
            path.write_text(render(record), encoding="utf-8")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, required=True, help="number of records")
    parser.add_argument(
        "--out", type=Path, required=True, help="output folder; records go to OUT/records"
    )
    args = parser.parse_args(argv)
    if args.n < len(MAKERS):
        parser.error(f"--n must be at least {len(MAKERS)} (one record of every kind)")
    sizes = write_corpus(args.n, args.out)
    total = sum(p.stat().st_size for p in (args.out / "records").rglob("*.yaml"))
    written = sum(sizes.values())
    print(
        f"wrote {written} records ({total / written / 1024:.2f} KB each on average) "
        f"to {args.out}/records",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
