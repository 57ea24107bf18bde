"""Helpers the test modules share (the harness, oracles, input strategies, browser and evaluate helpers); no tests."""
