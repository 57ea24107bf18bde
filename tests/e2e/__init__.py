"""End to end: browsers, Space builds, several processes, release, benchmarks, README (marker ``integration``)."""
