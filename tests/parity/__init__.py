"""Tests against a reference implementation or a naive oracle, and the architecture matrix (marker ``integration``)."""
