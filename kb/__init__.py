"""kb: a rules-and-records knowledge base about the compute-placement tax."""

__version__ = "0.2.0"
