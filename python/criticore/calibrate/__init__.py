"""The request-level (transaction) memory model's experiments and the
calibration of the fluid model against them (docs/transaction-model.md)."""
