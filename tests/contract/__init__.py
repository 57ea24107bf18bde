"""What every metric promises alike: the one contract, errors, refusals, generated inputs, documented examples."""
