"""The shipped trained policies (numpy exports), their curves and evaluations: package data."""
